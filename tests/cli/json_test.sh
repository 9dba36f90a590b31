#!/usr/bin/env bash
# Every command that prints results prints JSON with --json, with every key that
# docs/json-output.md documents for it; train reports the oracle's own time breakdown.
source "$(dirname "$0")/lib.sh" "$@"

runs="$data/paradl_abci_resnet50_runs.csv"
expect_json_keys models models --json
expect_json_keys models-show models show lenet --json
expect_json_keys clusters clusters --json
expect_json_keys clusters-show clusters show abci --json
expect_json_keys config config --json
expect_json_keys plan plan --gpus 64 --strategies data,data+filter --json
expect_json_keys plan-per-layer plan --per-layer --model small-cnn --gpus 4 --global-batch 8 --json
expect_json_keys plan-paradl plan --model-variant paradl --sample-seconds 0.0031195 --strategies data --gpus 64 \
  --batch-per-gpu 64 --json
expect_json_keys validate validate --measured "$runs" --json
expect_json_keys calibrate calibrate --measured "$runs" --fit-gpus 32,64 --json
expect_json_keys bench-compute bench compute --model lenet --batch 4 --repeats 1 --json
expect_json_keys bench-comm bench comm --op allreduce --max-bytes 4KiB --trials 1 --json

# train: --json prints the report (and nothing else), --report writes the same document, and its
# time breakdown has exactly the keys of plan's.
report=$(mktemp /tmp/paraxis-report.XXXXXX.json)
expect_json_keys train train --model lenet --iterations 5 --report "$report" --json
if python3 "$(dirname "$0")/check_json_keys.py" "$docs/json-output.md" train <"$report"; then
  passed=$((passed + 1))
else
  echo "FAIL: train --report wrote no report with the documented keys"; failures=$((failures + 1))
fi
plan_keys=$("$paraxis" plan --gpus 8 --strategies data --json | python3 -c 'import json,sys; print(sorted(json.load(sys.stdin)["estimates"][0]["time"]))')
train_keys=$(python3 -c 'import json,sys; print(sorted(json.load(open(sys.argv[1]))["time"]))' "$report")
if [ -n "$plan_keys" ] && [ "$plan_keys" = "$train_keys" ]; then
  passed=$((passed + 1))
else
  echo "FAIL: train's time keys $train_keys differ from plan's $plan_keys"; failures=$((failures + 1))
fi
rm -f "$report"
finish
