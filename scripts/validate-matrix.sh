#!/usr/bin/env bash
# The oracle against every strategy train runs (issue #14's validation matrix): for each model
# and grid, a short training run, then `paraxis validate` of its report against a cluster file.
# Prints predicted and measured compute, communication and total per run, the error, the mean
# absolute error, and per model the ranking agreement of predicted and measured totals
# (Kendall's tau-b over that model's grids). A measurement, not a test: this machine's speed
# drifts by tens of per cent, so compare runs made together. Each run's speed probe against the
# calibration's is its "slower" column; the error at each run's own speed (validate
# --at-run-speed) follows the table, to tell the drift from the model's own error.
#
#   scripts/validate-matrix.sh [--cluster FILE] [--quick] [--models LIST] [--iterations N] [--repeats N] [--hosts RATE]
#                              [--keep DIR] [--fit-models LIST [--fit KIND]] [--overlap-check] [--layers]
#                              [--recalibrate] [--refit]
#
#   --cluster FILE   the cluster the predictions use (default: local, or with --hosts
#                    scripts/clusters/netns-2x2-1gbit.yaml; a `calibrate` output)
#   --quick          first `paraxis calibrate --quick` on the same ranks and hosts from that
#                    cluster, and predict with what it measured (no fit to the runs)
#   --quick-models L what --quick times the layers of (calibrate --quick-models; default
#                    lenet,small-cnn@32,resnet18@64,cosmoflow@64: the models at the inputs the
#                    matrix runs them at; --quick times CosmoFlow 64^3 at 3 samples and 1)
#   --models LIST    comma-separated, NAME or NAME@INPUT (default lenet,small-cnn@32,resnet18@64,cosmoflow@64)
#   --iterations N   per run, 3 of them warm-up (default: lenet and small-cnn 100, resnet18 30,
#                    others 10; 2.5-10 s of steps each here: a 10-step run of a small model
#                    moved by 20-40 % from run to run, 40 steps (1-2 s) by 15-50 %)
#   --repeats N      runs of each model and grid (default 3), taken in turns (every grid once,
#                    then again) so that the machine's drift touches all alike; each row is the
#                    run with the median measured total (one 10-step run of small-cnn data=2
#                    measured 35 ms where three others took 49-61 ms)
#   --hosts RATE     2 network-namespace hosts x 2 ranks joined at RATE (tc's syntax: 1gbit;
#                    needs root; scripts/netns-hosts.sh), grids of 4 ranks; default: 2 ranks here
#   --keep DIR       keep the reports in DIR; reports already there are used, not rerun
#   --fit-models L   also the transfer check: `paraxis calibrate --measured` on the runs of
#                    the models in L (comma-separated, as in --models), then the other models'
#                    runs validated against that calibrated cluster, with no refit
#   --fit KIND       what that calibration fits: communication (default: the paths and the
#                    overlap; compute as calibrate --quick measured it, which
#                    a fit to two small models' runs moves the wrong way for the others: on five
#                    2-rank sittings, 2026-12-06, physical transferred at 11.8-20.6 %,
#                    communication at 5.6-8.0 %), physical (those and compute factors) or
#                    factors (one per kind of predicted time)
#   --overlap-check  also the overlap check: each model's data-parallel grid once more with
#                    --no-overlap (reports in DIR/no-overlap), then per model the exposed
#                    gradient communication measured and predicted with overlap and without,
#                    and whether the model's gradient traffic outlasts its backward (the
#                    models the issue's check is about)
#   --recalibrate    with --quick: `calibrate --quick` once more after the runs, and the mean
#                    error and rankings with that second calibration too: how far two
#                    sittings of the calibration alone move the result (2026-12-06, 2 ranks
#                    here: two sittings 30 s apart read the memory at 30 and 46 GB/s and
#                    put the same 20 runs at 7.2 and 13.6 %)
#   --refit          with --quick and --keep DIR holding an earlier sitting: each of its
#                    calibrations' devices fitted again by this build from the layer timings
#                    kept beside it (DIR/quick.calls.json, `bench compute --from-calls`, onto
#                    DIR/quick.yaml's network and implementation), and the kept runs predicted
#                    with that: a change to the oracle or the fit held to the sitting in seconds,
#                    on the same timings and runs (2026-12-06: the zeroing of the gradients
#                    priced, twelve calibrations of six sittings 10.7 -> 9.7 %)
#   --layers         also each run's timeline (train --trace, beside its report as .trace) and,
#                    per model and grid, the layers its prediction misses most: validate --trace
#                    on the repeat with the median total, the three largest misses with each
#                    one's forward and backward error (where a row's error comes from); then
#                    over every row the layers summed by kind (a kind's systematic error), and
#                    the replicated rows' exposed gradient time in validate --trace's parts,
#                    beside the rest of their communication (halo exchanges, collectives)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
paraxis=$root/build/paraxis
cluster=""
models=lenet,small-cnn@32,resnet18@64,cosmoflow@64
iterations=""
repeats=3
hosts=""
keep=""
quick=""
quick_models=lenet,small-cnn@32,resnet18@64,cosmoflow@64
fit_models=""
fit_kind=communication
overlap_check=""
layers=""
recalibrate=""
refit=""
while [ $# -gt 0 ]; do
  case $1 in
    --fit) fit_kind=${2:?--fit needs factors, physical or communication}; shift 2 ;;
    --fit-models) fit_models=${2:?--fit-models needs a list}; shift 2 ;;
    --quick) quick=1; shift ;;
    --quick-models) quick_models=${2:?--quick-models needs a list}; shift 2 ;;
    --overlap-check) overlap_check=1; shift ;;
    --layers) layers=1; shift ;;
    --recalibrate) recalibrate=1; shift ;;
    --refit) refit=1; shift ;;
    --cluster) cluster=${2:?--cluster needs a file}; shift 2 ;;
    --models) models=${2:?--models needs a list}; shift 2 ;;
    --iterations) iterations=${2:?--iterations needs a count}; shift 2 ;;
    --repeats) repeats=${2:?--repeats needs a count}; shift 2 ;;
    --hosts) hosts=${2:?--hosts needs a rate such as 1gbit}; shift 2 ;;
    --keep) keep=${2:?--keep needs a folder}; shift 2 ;;
    *) echo "validate-matrix.sh: unknown argument '$1' (see the comment at the top)" >&2; exit 2 ;;
  esac
done
[ -z "$iterations" ] || [[ $iterations =~ ^[0-9]+$ ]] && [ "${iterations:-6}" -ge 6 ] ||
  { echo "validate-matrix.sh: --iterations: expected at least 6 (3 warm up, 3 measured), found '$iterations'" >&2; exit 2; }
[[ $repeats =~ ^[0-9]+$ ]] && [ "$repeats" -ge 1 ] && [ "$repeats" -le 99 ] ||
  { echo "validate-matrix.sh: --repeats: expected a count in [1, 99], found '$repeats'" >&2; exit 2; }
[ -n "$cluster" ] || cluster=$([ -n "$hosts" ] && echo "$root/scripts/clusters/netns-2x2-1gbit.yaml" || echo local)
[ -z "$recalibrate" ] || [ -n "$quick" ] ||
  { echo "validate-matrix.sh: --recalibrate: only with --quick (it repeats that calibration)" >&2; exit 2; }
[ -z "$refit" ] || { [ -n "$quick" ] && [ -n "$keep" ]; } ||
  { echo "validate-matrix.sh: --refit: only with --quick and --keep DIR (it fits a kept sitting's calibrations again)" >&2; exit 2; }
[ -x "$paraxis" ] || { echo "validate-matrix.sh: $paraxis is not built (make build)" >&2; exit 2; }
work=${keep:-$(mktemp -d /tmp/paraxis-matrix.XXXXXX)}
mkdir -p "$work"
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT

if [ -n "$hosts" ]; then
  grids=(data=4 data=2xh=2 data=2xfilter=2 data=2xchannel=2 data=2xpipeline=2)
  launch() { "$root/scripts/netns-hosts.sh" with 2 "$hosts" 2 -- "$paraxis" "$@"; }
  data_grid=data=4
else
  grids=(data=2 h=2 filter=2 channel=2 pipeline=2)
  launch() { mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader -np 2 "$paraxis" "$@"; }
  data_grid=data=2
fi

# quick_calibration NAME: calibrate --quick from the given cluster into $work/NAME.yaml, its layer
# timings beside it as NAME.calls.json (`bench compute --from-calls` fits them again: a change to
# the fit held to this sitting's runs on the same timings), kept from an earlier run with --keep.
# Sets `calibrated` to the cluster file to predict with (with --refit, the kept one's device
# fitted again: refit_device).
given_cluster=$cluster
quick_calibration() {
  calibrated=$work/$1.yaml
  if [ -n "$keep" ] && [ -s "$work/$1.yaml" ]; then
    echo "  calibrate --quick ($1): kept from an earlier run in $keep" >&2
    [ -z "$refit" ] || refit_device "$1"
    return
  fi
  local start=$(date +%s)
  launch calibrate --quick --quick-models "$quick_models" --cluster "$given_cluster" --out "$work/$1.yaml" \
    --save-calls "$work/$1.calls.json" >"$work/$1.log" 2>&1 ||
    { echo "validate-matrix.sh: calibrate --quick ($1) failed: $(tail -1 "$work/$1.log")" >&2; exit 1; }
  echo "  calibrate --quick ($1): $(( $(date +%s) - start )) s" >&2
}
# refit_device NAME: the kept calibration NAME's device fitted again by this build from its layer
# timings, onto the rest of its cluster file, as $work/NAME.refit.yaml.
refit_device() {
  [ -s "$work/$1.calls.json" ] ||
    { echo "validate-matrix.sh: --refit: no layer timings kept beside $work/$1.yaml ($1.calls.json)" >&2; exit 2; }
  "$paraxis" bench compute --from-calls "$work/$1.calls.json" --cluster "$work/$1.yaml" --out "$work/$1.refit.yaml" \
    >"$work/$1.refit.log" 2>&1 ||
    { echo "validate-matrix.sh: --refit ($1) failed: $(tail -1 "$work/$1.refit.log")" >&2; exit 1; }
  calibrated=$work/$1.refit.yaml
  echo "  calibrate --quick ($1): its device fitted again by this build ($calibrated)" >&2
}
if [ -n "$quick" ]; then
  quick_calibration quick
  cluster=$calibrated
fi

# Per model: its train options. Small batches keep cosmoflow's 64^3 volumes to a fraction of a
# second a step, and 32 synthetic volumes to a few GiB (256 of them took ~10 GiB a rank).
options() {
  local name=${1%@*} input=""
  [[ $1 == *@* ]] && input=${1#*@}
  local steps=$iterations
  if [ -z "$steps" ]; then
    case $name in lenet | small-cnn) steps=100 ;; resnet18) steps=30 ;; *) steps=10 ;; esac
  fi
  local args=(--model "$name" --iterations "$steps" --threads 1 --quiet)
  if [ -n "$input" ]; then
    [ "$name" = cosmoflow ] && input="${input}x${input}x${input}"
    args+=(--input "$input")
  fi
  case $name in
    cosmoflow) args+=(--batch-per-rank 2 --synthetic-samples 32) ;;
    resnet18) args+=(--batch-per-rank 8 --synthetic-samples 256) ;;
    *) args+=(--batch-per-rank 16 --synthetic-samples 256) ;;
  esac
  printf '%s\n' "${args[@]}"
}

IFS=, read -r -a model_list <<<"$models"
for repeat in $(seq 1 "$repeats"); do
  for model in "${model_list[@]}"; do
    mapfile -t args < <(options "$model")
    for grid in "${grids[@]}"; do
      report="$work/${model//@/_}.${grid}.r${repeat}.json"
      if [ -n "$keep" ] && [ -s "$report" ]; then echo "  $model $grid #$repeat: kept from an earlier run in $keep" >&2; continue; fi
      start=$(date +%s)
      # --cluster: the run executes what plan picks on the cluster it is validated against (the
      # allreduce, a pipeline's stage cut).
      traced=()
      [ -z "$layers" ] || traced=(--trace "${report%.json}.trace")
      if launch train "${args[@]}" --grid "$grid" --cluster "$cluster" --report "$report" "${traced[@]}" >"$work/log" 2>&1; then
        echo "  $model $grid #$repeat: $(( $(date +%s) - start )) s" >&2
      else
        echo "  $model $grid #$repeat: did not run: $(grep -m1 'paraxis:' "$work/log" || tail -1 "$work/log")" >&2
        rm -f "$report"
      fi
    done
  done
done

shopt -s nullglob
reports=("$work"/*.*.r*.json)
[ ${#reports[@]} -gt 0 ] || { echo "validate-matrix.sh: no run finished" >&2; exit 1; }
for report in "${reports[@]}"; do
  "$paraxis" validate --measured "$report" --cluster "$cluster" --json >"${report%.json}.validated" ||
    echo "  validate refused $(basename "$report")" >&2
  # The same at the run's own speed (its speed probe against the calibration's), where both
  # have one: how much of the error is the machine's drift.
  "$paraxis" validate --measured "$report" --cluster "$cluster" --json --at-run-speed >"${report%.json}.atspeed" 2>/dev/null ||
    rm -f "${report%.json}.atspeed"
  if [ -n "$layers" ] && [ -s "${report%.json}.trace" ]; then
    "$paraxis" validate --measured "$report" --trace "${report%.json}.trace" --cluster "$cluster" --json \
      >"${report%.json}.layers" || { echo "  validate --trace refused $(basename "$report")" >&2; rm -f "${report%.json}.layers"; }
  fi
done

# summary [SUFFIX]: the table of the *.SUFFIX validations (default validated).
summary() {
/usr/bin/python3 - "$work" "$cluster" "${1:-validated}" <<'PY'
import glob, json, os, sys
from collections import defaultdict

work, cluster, suffix = sys.argv[1], sys.argv[2], sys.argv[3]
# Each (model, grid): the repeat with the median measured total (the lower middle of an even count).
runs = defaultdict(list)
for path in sorted(glob.glob(os.path.join(work, "*." + suffix))):
    if os.path.getsize(path) == 0:
        continue
    v = json.load(open(path))
    r = v["runs"][0]
    model = os.path.basename(path).split(".")[0]
    runs[(model, r["grid"])].append((r["measured"], r["predicted"], r["error"], v.get("warnings", []), r.get("slowdown")))
rows, spread = [], {}
for (model, grid), repeats in sorted(runs.items()):
    repeats.sort(key=lambda t: t[0]["total"])
    m, p, error, warnings, slowdown = repeats[(len(repeats) - 1) // 2]
    rows.append((model, grid, m, p, error, warnings, slowdown))
    totals = [t[0]["total"] for t in repeats]
    spread[(model, grid)] = (len(totals), (max(totals) - min(totals)) / m["total"])

# unordered(i, j): the runs do not order the pair, which is then left out.
def kendall_tau_b(xs, ys, unordered=lambda i, j: False):
    concordant = discordant = tx = ty = 0
    for i in range(len(xs)):
        for j in range(i + 1, len(xs)):
            dx, dy = xs[i] - xs[j], ys[i] - ys[j]
            if unordered(i, j):
                continue
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                tx += 1
            elif dy == 0:
                ty += 1
            elif (dx > 0) == (dy > 0):
                concordant += 1
            else:
                discordant += 1
    denominator = ((concordant + discordant + tx) * (concordant + discordant + ty)) ** 0.5
    return (concordant - discordant) / denominator if denominator else float("nan")

ms = lambda s: f"{s * 1e3:9.2f}" if s > 0 else "        -"
print(f"cluster {cluster}; times per iteration in ms")
print(f"{'model':<14} {'grid':<18} {'meas comp':>9} {'comm':>9} {'total':>9} {'pred comp':>9} {'comm':>9} {'total':>9} {'error':>7}"
      f" {'runs, spread':>13} {'slower':>6}")
for model, grid, m, p, error, warnings, slowdown in rows:
    count, width = spread[(model, grid)]
    print(f"{model:<14} {grid:<18} {ms(m['compute'])} {ms(m['communication'])} {ms(m['total'])} "
          f"{ms(p['compute'])} {ms(p['communication'])} {ms(p['total'])} {error * 100:6.1f}% {count:>4} {width * 100:6.1f}%"
          f" {f'{slowdown:5.2f}x' if slowdown else '     -'}")
    for w in warnings:
        print(f"  warning: {w}")
errors = [row[4] for row in rows]
print(f"\nmean absolute error on the totals: {sum(errors) / len(errors) * 100:.1f}% over {len(rows)} runs")
# The level: the median row's predicted over measured total. Where the machine ran every run
# slower or faster than it did for the calibration, each row carries that level; taken out,
# what is left is the model's shape (a diagnosis, not a prediction).
ratios = sorted(p["total"] / m["total"] for _, _, m, p, *_ in rows)
level = (ratios[(len(ratios) - 1) // 2] + ratios[len(ratios) // 2]) / 2
shaped = sum(abs(r / level - 1) for r in ratios) / len(ratios)
print(f"level: the median row's prediction {abs(level - 1) * 100:.1f}% {'short of' if level < 1 else 'over'} its measured "
      f"total; with that level taken out the rows sit {shaped * 100:.1f}% off")
by_model = defaultdict(list)
for model, grid, m, p, error, *_ in rows:
    by_model[model].append((grid, m["total"], p["total"]))
for model, runs_of_model in by_model.items():
    if len(runs_of_model) < 2:
        print(f"{model}: one run, no ranking")
        continue
    measured = [a for _, a, _ in runs_of_model]
    predicted = [b for _, _, b in runs_of_model]
    tau = kendall_tau_b(measured, predicted)
    # How far apart two measured medians are, and the wider spread of their repeats: inside
    # it, the runs cannot order the pair.
    def apart(i, j):
        return abs(measured[i] - measured[j]) / min(measured[i], measured[j])
    def noise(i, j):
        return max(spread[(model, runs_of_model[i][0])][1], spread[(model, runs_of_model[j][0])][1])
    unordered = lambda i, j: apart(i, j) <= noise(i, j)
    wrong = [f"{runs_of_model[i][0]}/{runs_of_model[j][0]} {apart(i, j) * 100:.1f}% apart, spread {noise(i, j) * 100:.1f}%"
             for i in range(len(measured)) for j in range(i + 1, len(measured))
             if (measured[i] - measured[j]) * (predicted[i] - predicted[j]) < 0]
    print(f"{model}: Kendall tau-b of predicted against measured totals over {len(runs_of_model)} grids: {tau:.2f}"
          + (f" (ranked against the runs: {'; '.join(wrong)})" if wrong else ""))
    ties = sum(unordered(i, j) for i in range(len(measured)) for j in range(i + 1, len(measured)))
    if ties:
        print(f"  over the pairs the runs order (leaving out {ties} apart by no more than their spread): "
              f"{kendall_tau_b(measured, predicted, unordered):.2f}")
PY
}
summary
# Per model and grid, the layers the repeat with the median total misses most (--layers).
layer_misses() {
/usr/bin/python3 - "$work" <<'PY'
import glob, json, os, sys
from collections import defaultdict

runs = defaultdict(list)
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.layers"))):
    v = json.load(open(path))
    r = v["runs"][0]
    runs[(os.path.basename(path).split(".")[0], r["grid"])].append((r["measured"]["total"], v["layers"],
                                                                    v.get("layer_kinds", []),
                                                                    v.get("exposed_gradient"), r))
pct = lambda p, m: f"{(p / m - 1) * 100:+.0f}%" if m else "-"
print("\nwhere each row's error comes from (validate --trace on its median repeat; ms predicted less measured,"
      " forward / backward error):")
kinds = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0, 0])  # measured, predicted forward; backward; layers
exposed = []  # the replicated rows' exposed gradient time, measured and predicted in parts
for (model, grid), repeats in sorted(runs.items()):
    repeats.sort(key=lambda t: t[0])
    _, median_layers, median_kinds, median_exposed, median_run = repeats[(len(repeats) - 1) // 2]  # the summary's row
    if median_exposed and median_exposed["predicted_reductions_s"] + median_exposed["predicted_group_awaits_s"] > 0:
        exposed.append((model, grid, median_exposed, median_run))
    for k in median_kinds:
        sums = kinds[k["kind"]]
        sums[0] += k["measured_forward_s"]; sums[1] += k["predicted_forward_s"]
        sums[2] += k["measured_backward_s"]; sums[3] += k["predicted_backward_s"]; sums[4] += k["layers"]
    layers = [l for l in median_layers if l["off_s"] is not None]
    layers.sort(key=lambda l: -abs(l["off_s"]))
    misses = []
    for l in layers[:3]:
        m, p = l["measured"], l["predicted"]
        backward = pct(p["backward_s"], m["backward_s"]) if m["backward_s"] is not None else "-"
        misses.append(f"{l['layer']} {l['off_s'] * 1e3:+.3f} ({pct(p['forward_s'], m['forward_s'])} / {backward})")
    total = sum(l["off_s"] for l in layers)
    print(f"{model:<14} {grid:<18} {total * 1e3:+8.3f} ms: {', '.join(misses)}")
if kinds:
    ranked = sorted(kinds.items(), key=lambda kv: -abs(kv[1][1] - kv[1][0] + kv[1][3] - kv[1][2]))
    print("over every row, by kind (forward / backward error, layers summed):",
          ", ".join(f"{kind} {pct(v[1], v[0])} / {pct(v[3], v[2])} ({v[4]})" for kind, v in ranked))
if exposed:
    print("\nthe exposed gradient time a step, measured / predicted (ms; validate --trace's parts: the next forward's"
          " waits / the reductions' own and a wait a group; after backward / the ranks' drift; how often backward"
          " ended with a chunk in flight, and its run-on; beside it the rest of the communication, the split"
          " layers' halo exchanges and collectives with their waits, measured / predicted):")
    for model, grid, e, run in exposed:
        forward = (e["forward_first_s"] + e["forward_later_s"]) * 1e3
        predicted = (e["predicted_reductions_s"] + e["predicted_group_awaits_s"]) * 1e3
        t = run["predicted"]["time"]
        layer_comm = (run["measured"]["communication"] - e["measured_s"]) * 1e3
        print(f"{model:<14} {grid:<18} {e['measured_s'] * 1e3:7.3f} / {e['predicted_s'] * 1e3:7.3f}: forward"
              f" {forward:.3f} / {predicted:.3f}, after backward {e['after_backward_s'] * 1e3:.3f} /"
              f" {e['predicted_drift_s'] * 1e3:.3f}; chunk in flight {e['in_flight_share'] * 100:.0f}%,"
              f" {e['in_flight_after_s'] * 1e3:.3f}; layers {layer_comm:.3f} /"
              f" {(t['halo'] + t['layer_collectives']) * 1e3:.3f}")
PY
}
[ -z "$layers" ] || ! compgen -G "$work/*.layers" >/dev/null || layer_misses
if compgen -G "$work/*.atspeed" >/dev/null; then
  echo
  echo "at each run's own speed (validate --at-run-speed: the device slowed by the run's speed probe against the"
  echo "calibration's; not a prediction, a measure of what the machine's drift costs):"
  summary atspeed | grep -E "^mean absolute|^level|Kendall|over the pairs"
fi

# The same runs against a second sitting of the calibration, made after them.
if [ -n "$recalibrate" ]; then
  quick_calibration quick-after
  for report in "${reports[@]}"; do
    "$paraxis" validate --measured "$report" --cluster "$calibrated" --json >"${report%.json}.after" ||
      echo "  validate refused $(basename "$report") against $(basename "$calibrated")" >&2
  done
  echo
  echo "with a second calibrate --quick after the runs ($calibrated; the calibration's own spread:"
  echo "$(grep -h '^speed probe' "$work/quick.log" "$work/quick-after.log" | sed 's/ (small-cnn.*)//' | paste -sd ';' -)):"
  summary after | grep -E "^mean absolute|^level|Kendall|over the pairs"
fi

# The overlap check: the data-parallel runs again with the gradient reduction after backward.
overlap() {
  local off=$work/no-overlap
  mkdir -p "$off"
  for repeat in $(seq 1 "$repeats"); do
    for model in "${model_list[@]}"; do
      mapfile -t args < <(options "$model")
      report="$off/${model//@/_}.${data_grid}.r${repeat}.json"
      [ -n "$keep" ] && [ -s "$report" ] && continue
      launch train "${args[@]}" --grid "$data_grid" --no-overlap --cluster "$cluster" --report "$report" >"$work/log" 2>&1 ||
        { echo "  $model $data_grid --no-overlap #$repeat: did not run: $(tail -1 "$work/log")" >&2; rm -f "$report"; }
    done
  done
  for report in "$off"/*.json; do
    "$paraxis" validate --measured "$report" --cluster "$cluster" --json >"${report%.json}.validated" ||
      echo "  validate refused $(basename "$report")" >&2
  done
  /usr/bin/python3 - "$work" "$off" "$data_grid" <<'PY'
import glob, json, os, sys
work, off, grid = sys.argv[1:]
def median_run(folder, model):
    runs = []
    for path in glob.glob(os.path.join(folder, f"{model}.{grid}.r*.validated")):
        if os.path.getsize(path) == 0:
            continue
        r = json.load(open(path))["runs"][0]
        measured = json.load(open(path[: -len(".validated")] + ".json"))["time"]
        runs.append((r["measured"]["total"], r, measured))
    runs.sort(key=lambda t: t[0])
    return runs[(len(runs) - 1) // 2][1:] if runs else None
ms = lambda s: f"{s * 1e3:8.2f}"
print(f"\noverlap check ({grid}): exposed communication per iteration in ms, measured / predicted")
print(f"{'model':<14} {'backward':>8} {'traffic':>8} {'outlasts':>8}   {'overlap on':>19} {'error':>7}   {'overlap off':>19} {'error':>7}")
models = sorted({os.path.basename(p).split(".")[0] for p in glob.glob(os.path.join(work, f"*.{grid}.r*.validated"))})
for model in models:
    on, off_run = median_run(work, model), median_run(off, model)
    if on is None or off_run is None:
        print(f"{model:<14} (no run {'with' if on is None else 'without'} overlap)")
        continue
    cells = []
    for r, _ in (on, off_run):
        m, p = r["measured"]["communication"], r["predicted"]["communication"]
        cells.append(f"{ms(m)} / {ms(p)} {((p - m) / m * 100 if m > 0 else float('nan')):+6.1f}%")
    # Traffic: the reductions' own time with overlap off (nothing beside them slows them).
    t = off_run[1]
    backward = t["backward_data"] + t["backward_weight"]
    traffic = t["gradient_allreduce"]
    print(f"{model:<14} {ms(backward)} {ms(traffic)} {'yes' if traffic > backward else 'no':>8}   {cells[0]}   {cells[1]}")
PY
}
[ -z "$overlap_check" ] || overlap

# The transfer check: fit on some models' runs, validate the others' against the fit.
[ -n "$fit_models" ] || exit 0
fitted=() held=()
IFS=, read -r -a fit_list <<<"$fit_models"
for report in "${reports[@]}"; do
  name=$(basename "$report"); name=${name%%.*}
  in_fit=""
  for model in "${fit_list[@]}"; do [ "$name" = "${model//@/_}" ] && in_fit=1; done
  if [ -n "$in_fit" ]; then fitted+=("$report"); else held+=("$report"); fi
done
[ ${#fitted[@]} -gt 0 ] && [ ${#held[@]} -gt 0 ] ||
  { echo "validate-matrix.sh: --fit-models: expected runs both of $fit_models and of other models" >&2; exit 2; }
"$paraxis" calibrate --fit "$fit_kind" --cluster "$cluster" --measured "${fitted[@]}" --out "$work/transfer.yaml" >"$work/transfer.log" 2>&1 ||
  { echo "validate-matrix.sh: calibrate on $fit_models failed: $(tail -1 "$work/transfer.log")" >&2; exit 1; }
echo
echo "transfer: calibrated ($fit_kind) on the ${#fitted[@]} runs of $fit_models ($(grep -m1 'mean absolute error on the fitted' "$work/transfer.log"))"
rm -f "$work"/*.validated
for report in "${held[@]}"; do
  "$paraxis" validate --measured "$report" --cluster "$work/transfer.yaml" --json >"${report%.json}.validated" ||
    echo "  validate refused $(basename "$report")" >&2
done
cluster=$work/transfer.yaml
summary | tail -n +2
