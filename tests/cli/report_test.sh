#!/usr/bin/env bash
# paraxis report (issue #17): from a plan sweep, a validate run, a bench comm run and a train
# run, one HTML file whose every plotted value equals its JSON's (check_report.py), that
# refers to nothing outside itself, and that headless Chromium (Debian's chromium) renders,
# with the network off (a fresh network namespace), into a screenshot that is not blank
# (check_screenshot.py). plan --plot draws the same samples/s as the report. Bad input: one
# line, exit 2.
source "$(dirname "$0")/lib.sh" "$@"
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/paraxis-report.XXXXXX)
trap 'rm -rf "$work"' EXIT

check() {  # check DESCRIPTION COMMAND...: the command succeeds
  local what=$1; shift
  if "$@"; then passed=$((passed + 1)); else echo "FAIL: $what"; failures=$((failures + 1)); fi
}
"$paraxis" plan --gpus 8..1024 --json >"$work/plan.json" --plot "$work/plan.svg" 2>"$work/plot.err"
"$paraxis" validate --measured "$data/paradl_abci_resnet50_runs.csv" --json >"$work/validate.json"
"$paraxis" bench comm --op allreduce,allgather --max-bytes 64KiB --trials 1 --iterations 2 --json >"$work/bench.json"
"$paraxis" train --model lenet --epochs 2 --synthetic-samples 128 --threads 1 --quiet --json >"$work/train.json"
docs=("$work/plan.json" "$work/validate.json" "$work/bench.json" "$work/train.json")
expect_ok "wrote .*report.html: 4 input\(s\), 10 chart\(s\)" report "${docs[@]}" --out "$work/report.html"
check "every plotted value is its JSON's" /usr/bin/python3 "$here/check_report.py" "$work/report.html" "${docs[@]}"

# Offline: a network namespace of its own has no network at all.
unshare -n chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1600,3000 \
  --screenshot="$work/shot.png" "file://$work/report.html" >"$work/chromium.log" 2>&1
check "headless Chromium rendered the report, offline" test -s "$work/shot.png"
check "the screenshot is not blank" /usr/bin/python3 "$here/check_screenshot.py" "$work/shot.png"

check "plan --plot says what it wrote" grep -q "wrote the chart of samples/s by GPUs per strategy to $work/plan.svg" "$work/plot.err"
check "plan --plot draws the report's samples/s" /usr/bin/python3 - "$work/plan.svg" "$work/report.html" <<'PY'
import re, sys
marks = lambda text: sorted(re.findall(r'<circle class="mark"[^>]*data-series="([^"]+)" data-x="([^"]+)" data-y="([^"]+)"', text))
svg = open(sys.argv[1]).read()
report = open(sys.argv[2]).read()
first_chart = report[report.index("<svg"):report.index("</svg>")]
assert svg.startswith("<?xml") and marks(svg) and marks(svg) == marks(first_chart), (len(marks(svg)), len(marks(first_chart)))
PY

expect_error "not_a_report.json: not the --json output of plan, validate, bench comm or train" report "$data/not_a_report.json"
expect_error "nope.json: cannot read it" report "$work/nope.json"
expect_error "--gpus 3: the plan has no feasible estimate at 3 GPUs" report "$work/plan.json" --gpus 3
expect_error "paradl_abci_resnet50.csv: not a JSON document" report "$data/paradl_abci_resnet50.csv"
expect_error "--out /nonexistent/r.html: the folder ./nonexistent. does not exist" report "$work/plan.json" --out /nonexistent/r.html
expect_error "--plot /nonexistent/p.svg: the folder ./nonexistent. does not exist" plan --gpus 8 --plot /nonexistent/p.svg
finish
