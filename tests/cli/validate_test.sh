#!/usr/bin/env bash
# paraxis validate and calibrate: measured runs against the oracle, train reports.
source "$(dirname "$0")/lib.sh" "$@"

runs="$data/paradl_abci_resnet50_runs.csv"
expect_ok "mean absolute error on the totals: [0-9.]+%" validate --measured "$runs"
expect_error "nope.csv: cannot read the measured runs" validate --measured nope.csv
expect_error "bad_runs.csv:2: column 'grid': grid 'data=8xq=4'" validate --measured "$data/bad_runs.csv"
expect_error "measured run 'big' \(line 3\): data=8192 needs 8192 devices" validate --measured "$data/too_big_runs.csv"
expect_error "--measured is required" calibrate
expect_error "calibrate: --quick-models needs --quick" calibrate --quick-models lenet
expect_error "--quick-models 'nope': unknown model 'nope'" calibrate --quick --quick-models lenet,nope
expect_error "--fit-gpus 8: no run in" calibrate --measured "$runs" --fit-gpus 8
expect_error "--fit-gpus: expected a count" calibrate --measured "$runs" --fit-gpus abc
expect_error "--out /nonexistent/x.yaml: the folder '/nonexistent' does not exist" calibrate --measured "$runs" --out /nonexistent/x.yaml
calibrated=$(mktemp /tmp/paraxis-calibrated.XXXXXX.yaml)
expect_ok "held-out runs: [0-9.]+%" calibrate --measured "$runs" --fit-gpus 32,64 --out "$calibrated"
expect_ok "implementation factors .*paraxis calibrate" clusters show "$calibrated"
expect_ok "implementation factors: paraxis calibrate" validate --measured "$runs" --cluster "$calibrated"
expect_ok "communication paths as fitted" calibrate --measured "$runs" --fit-gpus 32,64 --fit physical
expect_ok "communication paths as fitted" calibrate --measured "$runs" --fit-gpus 32,64 --fit communication
if ! "$paraxis" calibrate --measured "$runs" --fit-gpus 32,64 --fit communication | grep -qE "^compute +1 \(compute as the device gives it\)"; then
  echo "FAIL: calibrate --fit communication fitted a compute factor"; failures=$((failures + 1))
fi
expect_error "--fit" calibrate --measured "$runs" --fit bogus
rm -f "$calibrated"
report=$(mktemp /tmp/paraxis-report.XXXXXX.json)
trace=$(mktemp /tmp/paraxis-trace.XXXXXX.json)
"$paraxis" train --model lenet --iterations 6 --report "$report" --trace "$trace" >/dev/null
# --trace: the run's layers one by one against the oracle's.
expect_ok "per layer against .*paraxis-trace" validate --measured "$report" --cluster local --trace "$trace"
expect_ok "^conv2 +0 +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3} " \
  validate --measured "$report" --cluster local --trace "$trace"
expect_ok "largest misses: [a-z0-9]+ [-+][0-9]+\.[0-9]{3} ms" validate --measured "$report" --cluster local --trace "$trace"
# (conv anywhere in the list, which runs largest first: on a loaded machine the few measured
# steps' fc and pools outgrew it, 6 of 8 runs beside two busy loops.)
expect_ok "^by kind [^:]*: (.*, )?conv [-+][0-9]+\.[0-9]{3} ms \([-+][0-9]+% / [-+][0-9]+%, 2 layers\)" \
  validate --measured "$report" --cluster local --trace "$trace"
# The exposed gradient time as the trace takes it apart (a 1-rank run: nothing to reduce, so the
# oracle prices none; the trace's waits are the engine's no-op awaits and the closing agreement,
# microseconds that a loaded machine stretches).
expect_ok "^exposed gradient time a step \(ms, the mean over [0-9]+ measured steps of every rank\): measured [0-9]+\.[0-9]{3} \(the forward's first wait for a group [0-9]+\.[0-9]{3}, its later waits [0-9]+\.[0-9]{3}, after backward [0-9]+\.[0-9]{3}\); predicted 0\.000 \(the reductions' own 0\.000, one wait a group beside them 0\.000, the ranks' drift 0\.000\)" \
  validate --measured "$report" --cluster local --trace "$trace"
expect_error "--trace: give one --measured train report, the run that wrote the trace \(12 runs given\)" \
  validate --measured "$data/paradl_abci_resnet50_runs.csv" --model resnet50 --trace "$trace"
expect_error "paraxis-nope.json: cannot read the trace" validate --measured "$report" --cluster local --trace /tmp/paraxis-nope.json
renamed=$(mktemp /tmp/paraxis-renamed.XXXXXX.json)
/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); [e.update(name='x' + e['name']) for e in d['traceEvents'] if e.get('cat') == 'layer']; json.dump(d, open(sys.argv[2], 'w'))" "$trace" "$renamed"
expect_error "--trace .*paraxis-renamed.*: none of its layers \('xconv1', ...\) is in model 'lenet'" \
  validate --measured "$report" --cluster local --trace "$renamed"
rm -f "$renamed"
# Its JSON has the documented keys; every layer is timed once a measured step (not in the
# warm-up, not in an evaluation), and their medians add up to no more than the measured steps'
# forwards (a layer's intervals lie inside them; in seconds, not microseconds).
"$paraxis" validate --measured "$report" --cluster local --trace "$trace" --json >"$trace.validated"
if python3 "$(dirname "$0")/check_json_keys.py" "$docs/json-output.md" validate-trace <"$trace.validated"; then
  passed=$((passed + 1))
else
  failures=$((failures + 1))
fi
/usr/bin/python3 - "$trace.validated" "$report" <<'PY' && passed=$((passed + 1)) || failures=$((failures + 1))
import json, sys
layers = json.load(open(sys.argv[1]))["layers"]
report = json.load(open(sys.argv[2]))
steps, forward = report["measured_iterations"], report["time"]["forward"]
timed = {l["layer"]: (l["measured"]["forward_s"], l["measured"]["forward_calls"]) for l in layers}
total = sum(f for f, _ in timed.values())
if not ({"conv1", "conv2", "fc1"} <= set(timed) and all(f > 0 and calls == steps for f, calls in timed.values())
        and 0 < total <= 1.02 * steps * forward):
    print(f"FAIL: validate --trace: layer forwards and calls {timed} (sum {total:.3g} s) against {steps} measured "
          f"steps of {forward:.3g} s forward")
    sys.exit(1)
PY
rm -f "$trace" "$trace.validated"
expect_ok "lenet on local against .* \(1 run\); times per iteration" validate --measured "$report" --cluster local
expect_ok "serial +1 +1 +32 +- +- +[0-9]+\.[0-9]{2} ms" validate --measured "$report" --cluster local
expect_ok "warning: paraxis-report.*: ran on CPU cores; cluster 'abci' describes Tesla V100-SXM2-16GB devices" validate --measured "$report" --cluster abci
if "$paraxis" validate --measured "$report" --cluster local | grep -q "warning"; then
  echo "FAIL: validate warned on the machine the report was made on"; failures=$((failures + 1))
else
  passed=$((passed + 1))
fi
# The run's speed probe against a cluster's: the cluster says it was measured at half the run's
# probe time, so the run ran 2x slower; --at-run-speed predicts it on a device twice as slow.
probe=$(/usr/bin/python3 -c "import json,sys,math; p=json.load(open(sys.argv[1]))['machine']['speed_probe_s']; assert 0 < p < 60 and math.isfinite(p); print(p)" "$report")
if [ -n "$probe" ]; then passed=$((passed + 1)); else echo "FAIL: the train report has no machine.speed_probe_s"; failures=$((failures + 1)); fi
expect_error "--at-run-speed: cluster 'local' has no speed probe" validate --measured "$report" --cluster local --at-run-speed
probed=$(mktemp /tmp/paraxis-probed.XXXXXX.yaml)
"$paraxis" calibrate --measured "$report" --cluster local --out "$probed" >/dev/null
sed -i "s/^device:$/device:\n  speed_probe: $(/usr/bin/python3 -c "print(${probe:-1} / 2)")/" "$probed"
expect_ok "warning: .*the machine ran 2.00x slower than when cluster 'local' was measured" validate --measured "$report" --cluster "$probed"
expect_ok "predicted at each run's own speed" validate --measured "$report" --cluster "$probed" --at-run-speed
/usr/bin/python3 - "$paraxis" "$report" "$probed" <<'PY' && passed=$((passed + 1)) || failures=$((failures + 1))
import json, subprocess, sys
paraxis, report, cluster = sys.argv[1:]
def run(*extra):
    out = subprocess.run([paraxis, "validate", "--measured", report, "--cluster", cluster, "--json", *extra],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["runs"][0]
plain, slowed = run(), run("--at-run-speed")
ratio = slowed["predicted"]["compute"] / plain["predicted"]["compute"]
if not (abs(plain["slowdown"] - 2) < 1e-9 and 1.9 < ratio < 2.1):
    print(f"FAIL: --at-run-speed: slowdown {plain['slowdown']}, predicted compute x{ratio:.3f} (expected 2)")
    sys.exit(1)
PY
# The slice the run's communication threads had (machine.comm_thread_slice_s; a 1-rank run has
# none and records none) against the one the cluster was measured with: another warns, the same
# one does not.
sliced=$(mktemp /tmp/paraxis-sliced.XXXXXX.json)
/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert 'comm_thread_slice_s' not in d['machine']; d['machine']['comm_thread_slice_s'] = 1e-4; json.dump(d, open(sys.argv[2],'w'))" "$report" "$sliced" &&
  passed=$((passed + 1)) || { echo "FAIL: a 1-rank report records a communication threads' slice"; failures=$((failures + 1)); }
sed -i "s/^implementation:$/implementation:\n  comm_thread_slice: 0.05/" "$probed"
expect_ok "warning: .*its communication threads ran with a 100 us time slice; cluster 'local' was measured with a 50 ms time slice" \
  validate --measured "$sliced" --cluster "$probed"
sed -i "s/^  comm_thread_slice: 0.05$/  comm_thread_slice: 100 us/" "$probed"
if "$paraxis" validate --measured "$sliced" --cluster "$probed" | grep -q "communication threads ran"; then
  echo "FAIL: validate warned of the slice the cluster was measured with"; failures=$((failures + 1))
else
  passed=$((passed + 1))
fi
rm -f "$sliced"
rm -f "$probed"
/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['machine'].update(host='elsewhere', hosts=2, ranks_per_host=1); json.dump(d, open(sys.argv[1],'w'))" "$report"
expect_ok "warning: .*ran on host 'elsewhere'; the local preset describes this host" validate --measured "$report" --cluster local
expect_ok "warning: .*ran 1 rank on 2 hosts .1 per host.; cluster 'local' (places|has) " validate --measured "$report" --cluster local
expect_error "measured run 'paraxis-report.*' ran model 'lenet', not 'resnet50' \(give --model lenet\)" validate --measured "$report" --model resnet50
"$paraxis" train --model lenet --iterations 4 --report "$report" >/dev/null
expect_error "key 'measured_iterations': 1, fewer than 3: too few iterations were measured" validate --measured "$report" --cluster local
/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['measured_iterations']=20; d['samples_per_second']=1e308; json.dump(d, open(sys.argv[1],'w'))" "$report"
expect_error "key 'samples_per_second': expected a rate in \(0, 1e12\], found 1e\+308" validate --measured "$report" --cluster local
rm -f "$report"
expect_error "expected the keys 'model' and 'strategy' of a 'paraxis train --json' report" validate --measured "$data/not_a_report.json"
finish
