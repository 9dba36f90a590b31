#!/usr/bin/env bash
# The paraxis command as a user meets it: user errors print exactly one line on stderr and
# exit with 2; successful commands exit 0; --json output parses as JSON.
set -u
paraxis=${1:?usage: cli_test.sh PARAXIS DATA_DIR}
data=${2:?usage: cli_test.sh PARAXIS DATA_DIR}
failures=0
passed=0

# expect_error PATTERN ARGS...: exit code 2, one stderr line matching PATTERN, nothing on stdout.
expect_error() {
  local pattern=$1; shift
  local out err code
  out=$("$paraxis" "$@" 2>/tmp/paraxis_cli_err.$$); code=$?
  err=$(cat /tmp/paraxis_cli_err.$$)
  local lines; lines=$(printf '%s' "$err" | grep -c '')
  if [ "$code" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -qE -- "$pattern" <<<"$err" || [ -n "$out" ]; then
    echo "FAIL: paraxis $*"; echo "  exit $code, $lines stderr lines: $err"; [ -n "$out" ] && echo "  stdout: ${out:0:200}"
    failures=$((failures + 1))
  else
    passed=$((passed + 1))
  fi
}

# expect_ok PATTERN ARGS...: exit code 0 and stdout matching PATTERN.
expect_ok() {
  local pattern=$1; shift
  local out code
  out=$("$paraxis" "$@" 2>&1); code=$?
  if [ "$code" -ne 0 ] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: paraxis $* (exit $code)"; echo "${out:0:400}"; failures=$((failures + 1))
  else
    passed=$((passed + 1))
  fi
}

# expect_json ARGS...: exit 0 and stdout is one JSON document.
expect_json() {
  if "$paraxis" "$@" | /usr/bin/python3 -c 'import json,sys; json.load(sys.stdin)'; then
    passed=$((passed + 1))
  else
    echo "FAIL: paraxis $* does not print valid JSON"; failures=$((failures + 1))
  fi
}

expect_error "bad_syntax.yaml:3:1: malformed YAML" models show "$data/bad_syntax.yaml"
expect_error "unknown_kind.yaml:5:.*unknown layer kind 'rectifier'" models show "$data/unknown_kind.yaml"
expect_error "shape_mismatch.yaml:6:.*layer 'join' \(add\): input shapes do not fit: 'a' gives 16x32x32, 'b' gives 16x16x16" \
  models show "$data/shape_mismatch.yaml"
expect_error "unknown key 'strides'" models show "$data/unknown_key.yaml"
expect_error "unknown cluster 'frontier': the presets are abci" clusters show frontier
expect_error "bad_cluster.yaml:6:21: device.memory_bandwidth" clusters show "$data/bad_cluster.yaml"
expect_error "unknown model 'resnet51': the zoo has" models show resnet51
expect_error "nope.yaml: cannot open the file" models show nope.yaml
expect_error "--input: expected spatial extents" models show resnet50 --input 22a
expect_error "takes 3 spatial dimensions, 2 were given" models show cosmoflow --input 64x64
expect_error "input 3x16x16 is too small|too small" models show alexnet --input 16
expect_error "apply to zoo models" models show "$data/lenet.yaml" --input 32
expect_error "batch" models show resnet50 --batch 0
expect_error "--frobnicate" models show resnet50 --frobnicate
expect_error "subcommand" 
PARAXIS_THREADS=many expect_error "environment variable PARAXIS_THREADS: expected an integer" config
expect_error "unknown strategy 'magic'" plan --strategies magic
expect_error "filter split over 128 exceeds the 64 filters of layer 'conv1'" plan --strategies filter --gpus 128 --global-batch 128
expect_error "global batch 100 does not divide over 64 data-parallel groups" plan --strategies data --gpus 64 --global-batch 100
expect_error "data=8192 needs 8192 devices; cluster 'abci' has 4352" plan --strategies data --gpus 8192
expect_error "--gpus: expected a count" plan --gpus lots
expect_error "--epochs-at: expected BATCH=EPOCHS" plan --epochs-at 90
expect_error "--reduce-order: expected fifo or priority, found 'lifo'" train --model lenet --reduce-order lifo --iterations 1
expect_error "needs --sample-seconds" plan --model-variant paradl
expect_error "device 'Tesla V100-SXM2-16GB' has no peak for data type 'fp8'" plan --dtype fp8
expect_ok "data .*data=64 .* 64 " plan --gpus 64 --strategies data,data+filter
expect_ok "explain: data" plan --gpus 64 --strategies data --explain
expect_ok "n.*xd1xh.*xw" plan --model small-cnn --gpus 4 --global-batch 8 --per-layer
expect_ok "ParaDL's equations" plan --model-variant paradl --sample-seconds 0.0031195 --strategies data --gpus 64 --batch-per-gpu 64
expect_ok "data .*data=64 .* 4096 .* 68.07" plan --model-variant paradl --sample-seconds 0.0031195 --paradl-network "$data/paradl_resnet50.net" --strategies data --gpus 64 --batch-per-gpu 64
expect_error "lenet.yaml:1: expected name|x|w|y" plan --model-variant paradl --sample-seconds 0.0031195 --paradl-network "$data/lenet.yaml" --gpus 64
expect_json plan --gpus 8,16 --json
emitted=$(mktemp /tmp/paraxis-emit.XXXXXX)
expect_ok "strategy" plan --gpus 64 --top 1 --emit "$emitted" --csv
if /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["version"] == 1 and d["grid"]["data"] >= 1' "$emitted"; then
  passed=$((passed + 1))
else
  echo "FAIL: --emit wrote no valid strategy JSON"; failures=$((failures + 1))
fi
rm -f "$emitted"
expect_error "--density: expected a fraction in \(0, 1\], found 2" train --density 2
expect_error "--lr-schedule: expected constant, step or cosine" train --lr-schedule linear
expect_error "--optimizer: only sgd" train --optimizer adam
expect_error "nope.json: cannot open the strategy file" train --plan nope.json
strategy=$(mktemp /tmp/paraxis-strategy.XXXXXX)
"$paraxis" plan --model small-cnn --gpus 8 --strategies data+filter --emit "$strategy" --csv >/dev/null
expect_error "has model-parallel axes; train runs the data axis only so far" train --model small-cnn --plan "$strategy"
rm -f "$strategy"
runs="$data/paradl_abci_resnet50_runs.csv"
expect_ok "mean absolute error on the totals: [0-9.]+%" validate --measured "$runs"
expect_error "nope.csv: cannot read the measured runs" validate --measured nope.csv
expect_error "bad_runs.csv:2: column 'grid': grid 'data=8xq=4'" validate --measured "$data/bad_runs.csv"
expect_error "measured run 'big' \(line 3\): data=8192 needs 8192 devices" validate --measured "$data/too_big_runs.csv"
expect_error "--measured is required" calibrate
expect_error "--fit-gpus 8: no run in" calibrate --measured "$runs" --fit-gpus 8
expect_error "--fit-gpus: expected a count" calibrate --measured "$runs" --fit-gpus abc
expect_error "--out /nonexistent/x.yaml: the folder '/nonexistent' does not exist" calibrate --measured "$runs" --out /nonexistent/x.yaml
expect_error "--out /nonexistent/x.yaml: the folder '/nonexistent' does not exist" bench compute --out /nonexistent/x.yaml
calibrated=$(mktemp /tmp/paraxis-calibrated.XXXXXX.yaml)
expect_ok "held-out runs: [0-9.]+%" calibrate --measured "$runs" --fit-gpus 32,64 --out "$calibrated"
expect_ok "implementation factors .*paraxis calibrate" clusters show "$calibrated"
expect_ok "implementation factors: paraxis calibrate" validate --measured "$runs" --cluster "$calibrated"
rm -f "$calibrated"
fitted=$(mktemp /tmp/paraxis-fitted.XXXXXX.yaml)
expect_ok "wrote .*paraxis-fitted" bench compute --model lenet,small-cnn --batch 4 --repeats 1 --out "$fitted"
expect_ok "device fitted by paraxis bench compute" clusters show "$fitted"
rm -f "$fitted"
expect_error "--batch: expected >= 1, found 0" bench compute --model lenet --batch 0
report=$(mktemp /tmp/paraxis-report.XXXXXX.json)
"$paraxis" train --model lenet --iterations 6 --report "$report" >/dev/null
expect_ok "lenet on local against .* \(1 run\); seconds per iteration" validate --measured "$report" --cluster local
expect_error "measured run 'paraxis-report.*' ran model 'lenet', not 'resnet50' \(give --model lenet\)" validate --measured "$report" --model resnet50
rm -f "$report"
expect_error "expected the keys 'model' and 'strategy' of a 'paraxis train --json' report" validate --measured "$data/not_a_report.json"
expect_ok "25,557,032" models show resnet50
expect_ok "total" models show "$data/residual.yaml"
expect_ok "inception-v3 .* 27,161,264" models
expect_ok "abci .* 4,352" clusters
expect_ok "spine .* 3:1" clusters show abci
expect_ok "json_indent" config
expect_ok "Usage" models show --help
expect_json models show resnet50 --json
expect_json models show "$data/residual.yaml" --json --batch 8
expect_json clusters show summit --json
expect_json config --json

echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
