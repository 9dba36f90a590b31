#!/usr/bin/env bash
# Filter and channel training against one rank, alternating runs; prints median iteration
# times, the ratio the model-parallel issue asks for (filter=2 on a wide model: <= 0.65x of
# one rank with 1 thread), per-rank peak step memory and layer-collective time, and the
# oracle's prediction of each run (paraxis validate on its report). A benchmark, not a test.
#
#   scripts/bench-model-parallel.sh [RUNS] [MODEL INPUT BATCH]
#
# Default: VGG-16 at 32x32, batch 32. Runs, each RUNS times in turn:
#   one      1 rank, 1 thread (the baseline)
#   filter   filter=2 on 2 ranks, 1 thread each
#   channel  channel=2 on 2 ranks, 1 thread each
set -euo pipefail
runs=${1:-3}
model=${2:-vgg16}
input=${3:-32x32}
batch=${4:-32}
root=$(cd "$(dirname "$0")/.." && pwd)
paraxis=$root/build/paraxis
tunables="glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967296"
work=$(mktemp -d /tmp/paraxis-bench-mp.XXXXXX)
trap 'rm -rf "$work"' EXIT
common=(train --model "$model" --input "$input" --batch-per-rank "$batch" --iterations 7
        --synthetic-samples $((batch * 8)) --threads 1 --quiet)

run() {  # run KIND INDEX: one training run, its report in $work/KIND.INDEX.json
  local kind=$1 out="$work/$1.$2.json"
  case $kind in
    one) GLIBC_TUNABLES=$tunables "$paraxis" "${common[@]}" --report "$out" ;;
    *) mpirun --allow-run-as-root --bind-to none --mca btl self,vader -np 2 -x GLIBC_TUNABLES="$tunables" \
         "$paraxis" "${common[@]}" --grid "$kind=2" --report "$out" ;;
  esac >/dev/null
}

kinds=(one filter channel)
for ((i = 1; i <= runs; i++)); do
  for kind in "${kinds[@]}"; do
    run "$kind" "$i"
    echo "  run $i $kind: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.3f s/iteration" % (r["global_batch"] / r["samples_per_second"]))' "$work/$kind.$i.json")" >&2
  done
done

python3 - "$work" "$runs" "${kinds[@]}" <<'PY'
import json, statistics, sys
work, runs, kinds = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def reports(kind): return [json.load(open(f"{work}/{kind}.{i}.json")) for i in range(1, runs + 1)]
seconds = {k: statistics.median(r["global_batch"] / r["samples_per_second"] for r in reports(k)) for k in kinds}
for k in kinds:
    memory = statistics.median(r["peak_step_bytes"] for r in reports(k))
    collectives = statistics.median(r["time"]["layer_collectives"] for r in reports(k)) * 1e3
    print(f"{k:<8} {seconds[k]:7.3f} s/iteration   peak step memory {memory / 2**20:8.1f} MiB per rank   "
          f"layer collectives {collectives:6.1f} ms")
for k in kinds[1:]:
    paired = statistics.median(b["global_batch"] / b["samples_per_second"] / (a["global_batch"] / a["samples_per_second"])
                               for a, b in zip(reports("one"), reports(k)))
    print(f"{k} / one = {seconds[k] / seconds['one']:.2f}x of the medians, {paired:.2f}x median of the rounds"
          + (" (issue's bound 0.65x)" if k == "filter" else ""))
PY

echo "the oracle's predictions (cluster 'local'), from the last run of each kind:"
for kind in "${kinds[@]}"; do
  "$paraxis" validate --measured "$work/$kind.$runs.json" --cluster local 2>&1 | sed "s/^/  $kind: /" | tail -3
done
