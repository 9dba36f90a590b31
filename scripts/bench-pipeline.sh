#!/usr/bin/env bash
# Pipelines and hybrids measured, a benchmark (not a test):
#   bubble  2 stages under 1F1B with m = 4 and 8 micro-batches, alternating runs: the measured
#           bubble fraction (time the busiest stage idles waiting for its neighbour, over the
#           iteration time) against the schedule's (p - 1) / (m + p - 1). That figure assumes
#           equal stages, so the default model is scripts/models/uniform-cnn.yaml (eight equal
#           convolutions, split 4 | 4) with micro-batches of 32+ samples; a model whose stages
#           differ (small-cnn: ~15 %) idles more on its faster stage, by the difference;
#   hosts   data=2 x pipeline=2 and data=2 x filter=2 on 2 network-namespace hosts x 2 ranks
#           (scripts/netns-hosts.sh, 1 Gbit/s), each with the oracle's prediction beside it
#           (paraxis validate on its report, the tests' two-host cluster with 2 devices per host).
#
#   scripts/bench-pipeline.sh [RUNS] [bubble|hosts|both] [MODEL BATCH]
set -euo pipefail
runs=${1:-3}
what=${2:-both}
root=$(cd "$(dirname "$0")/.." && pwd)
model=${3:-$root/scripts/models/uniform-cnn.yaml}
batch=${4:-256}
paraxis=$root/build/paraxis
work=$(mktemp -d /tmp/paraxis-bench-pipeline.XXXXXX)
trap 'rm -rf "$work"' EXIT
common=(train --model "$model" --batch-per-rank "$batch" --iterations 12
        --synthetic-samples $((batch * 4)) --threads 1 --quiet)

if [ "$what" != hosts ]; then
  for ((i = 1; i <= runs; i++)); do
    for m in 4 8; do
      mpirun --allow-run-as-root --bind-to none --mca btl self,vader -np 2 "$paraxis" "${common[@]}" \
        --grid pipeline=2 --micro-batches "$m" --report "$work/m$m.$i.json" >/dev/null
      echo "  run $i m=$m done" >&2
    done
  done
  python3 - "$work" "$runs" <<'PY'
import json, statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
for m in (4, 8):
    fractions, seconds = [], []
    for i in range(1, runs + 1):
        r = json.load(open(f"{work}/m{m}.{i}.json"))
        iteration = r["global_batch"] / r["samples_per_second"]
        fractions.append(r["time"]["bubble"] / iteration)
        seconds.append(iteration)
    ideal = 1 / (m + 1)
    f = statistics.median(fractions)
    print(f"pipeline=2, m={m}: bubble fraction {f:.3f} (median of {runs}; rounds {', '.join(f'{x:.3f}' for x in fractions)}) "
          f"against (p-1)/(m+p-1) = {ideal:.3f}: {f / ideal - 1:+.0%}; {statistics.median(seconds):.3f} s/iteration")
PY
  echo "the oracle's prediction of the last m=8 run (cluster 'local'):"
  "$paraxis" validate --measured "$work/m8.$runs.json" --cluster local 2>&1 | tail -3 | sed 's/^/  /'
fi

if [ "$what" != bubble ]; then
  small=(train --model lenet --batch-per-rank 32 --iterations 12 --synthetic-samples 512 --threads 1 --quiet)
  # The two-host cluster of the tests with two ranks (sharing one core's worth each) per host.
  sed 's/^devices_per_node: 1/devices_per_node: 2/; s/^name: two-hosts/name: two-hosts-2x2/' \
    "$root/tests/data/two_hosts.yaml" >"$work/hosts.yaml"
  for grid in data=2xpipeline=2 data=2xfilter=2; do
    bash "$root/scripts/netns-hosts.sh" with 2 1gbit 2 -- "$paraxis" "${small[@]}" --grid "$grid" \
      --report "$work/$grid.json" >/dev/null
    echo "$grid on 2 hosts x 2 ranks: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.1f ms/iteration, %.0f samples/s" % (1e3 * r["global_batch"] / r["samples_per_second"], r["samples_per_second"]))' "$work/$grid.json")"
    "$paraxis" validate --measured "$work/$grid.json" --cluster "$work/hosts.yaml" 2>&1 | tail -3 | sed 's/^/  /'
  done
fi
