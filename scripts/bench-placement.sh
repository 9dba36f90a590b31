#!/usr/bin/env bash
# A placement measured against its prediction (issue #16): scripts/models/inception-mini.yaml
# (two Inception-style modules of four branches) at 32 samples a step, 1 thread per rank, on one
# rank and placed on 2 ranks (`train --grid place=2`, placed by list scheduling and by the ILP,
# `--placement-method list|auto`), rounds alternating; medians of samples/s and their ratios,
# the measured speedups. Against each, `paraxis place` by the same method on 2 devices of this
# host as `calibrate --quick` (2 ranks at once, as the placement runs) describes it: the
# predicted speedup. (train places on the layer times it measures, place on the cluster's
# model of them.) A benchmark, not a test.
#
#   scripts/bench-placement.sh [RUNS] [ITERATIONS]     (defaults 5 15)
set -euo pipefail
runs=${1:-5}
iterations=${2:-15}
root=$(cd "$(dirname "$0")/.." && pwd)
paraxis=$root/build/paraxis
model=$root/scripts/models/inception-mini.yaml
mpirun=(mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader)
work=$(mktemp -d /tmp/paraxis-placement.XXXXXX)
trap 'rm -rf "$work"' EXIT
[ -x "$paraxis" ] || { echo "bench-placement.sh: $paraxis is not built (make build)" >&2; exit 2; }

start=$(date +%s)
"${mpirun[@]}" -np 2 "$paraxis" calibrate --quick --out "$work/quick.yaml" >"$work/quick.log" 2>&1 ||
  { echo "bench-placement.sh: calibrate --quick failed: $(tail -1 "$work/quick.log")" >&2; exit 1; }
echo "  calibrate --quick on 2 ranks: $(( $(date +%s) - start )) s" >&2
for method in auto list; do
  "$paraxis" place --model "$model" --cluster "$work/quick.yaml" --devices 2 --batch 32 --method "$method" --json \
    >"$work/place.$method.json"
done

rate() {  # rate RANKS TRAIN-ARGS...
  local ranks=$1; shift
  local launch=()
  [ "$ranks" -gt 1 ] && launch=("${mpirun[@]}" -np "$ranks")
  "${launch[@]}" "$paraxis" train --model "$model" --batch-per-rank 32 --iterations "$iterations" --synthetic-samples 512 \
    --threads 1 --json "$@" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["samples_per_second"])'
}

for ((i = 1; i <= runs; i++)); do
  echo "one $(rate 1)" >>"$work/rates"
  echo "list $(rate 2 --grid place=2 --placement-method list)" >>"$work/rates"
  echo "ilp $(rate 2 --grid place=2 --placement-method auto)" >>"$work/rates"
  echo "  round $i: $(tail -3 "$work/rates" | tr '\n' ' ')" >&2
done

/usr/bin/python3 - "$work" "$runs" <<'PY'
import json, statistics, sys
work, runs = sys.argv[1], sys.argv[2]
rates = {"one": [], "list": [], "ilp": []}
for line in open(f"{work}/rates"):
    name, value = line.split()
    rates[name].append(float(value))
one = statistics.median(rates["one"])
print(f"inception-mini, 32 samples a step, 1 thread per rank; medians of {runs} alternating runs")
print(f"  one rank             {one:8.1f} samples/s   runs: {' '.join(f'{v:.1f}' for v in rates['one'])}")
for method, name in (("list", "list"), ("auto", "ilp")):
    placed = statistics.median(rates[name])
    measured = placed / one
    p = json.load(open(f"{work}/place.{method}.json"))
    print(f"  place=2, {name:4}        {placed:8.1f} samples/s   runs: {' '.join(f'{v:.1f}' for v in rates[name])}")
    print(f"    measured speedup {measured:.2f}x; predicted by `place --method {method}` ({p['method']}): makespan "
          f"{p['makespan_s'] * 1e3:.1f} ms, one device {p['one_device_s'] * 1e3:.1f} ms: {p['speedup']:.2f}x; "
          f"measured / predicted {measured / p['speedup']:.2f}")
PY
