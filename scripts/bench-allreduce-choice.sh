#!/usr/bin/env bash
# The allreduce the oracle picks, run: 2 network-namespace hosts x 2 ranks at 1 Gbit/s
# (scripts/netns-hosts.sh), ResNet-18 at 64x64, 32 samples per rank, 1 thread per rank. For
# each algorithm, `plan --emit` writes the strategy (the oracle's own pick for `auto`) with
# the cluster scripts/clusters/netns-2x2-1gbit.yaml (or CLUSTER), `train --plan` runs it;
# `runtime` is that strategy with the choice left to the runtime (comm.allreduce: auto, what
# a strategy file without the key gets); rounds alternate. Prints the predicted and measured gradient allreduce per iteration and
# samples/s, medians. A benchmark, not a test.
#
#   scripts/bench-allreduce-choice.sh [RUNS] [ITERATIONS]     (defaults 5 12)
set -euo pipefail
runs=${1:-5}
iterations=${2:-12}
root=$(cd "$(dirname "$0")/.." && pwd)
paraxis=$root/build/paraxis
cluster=${CLUSTER:-$root/scripts/clusters/netns-2x2-1gbit.yaml}
tunables="glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967296"
work=$(mktemp -d /tmp/paraxis-allreduce.XXXXXX)
trap 'rm -rf "$work"' EXIT
model=(--model resnet18 --input 64 --classes 10)

for algorithm in auto ring hierarchical; do
  "$paraxis" plan "${model[@]}" --cluster "$cluster" --gpus 4 --grid data=4 --batch-per-gpu 32 \
    --allreduce "$algorithm" --emit "$work/$algorithm.plan.json" --json >"$work/$algorithm.predicted.json"
done
# The runtime's own choice (its default link figures, no hosts): the oracle's strategy with
# comm.allreduce set back to auto.
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["comm"]["allreduce"] = "auto"; json.dump(d, open(sys.argv[2], "w"))' \
  "$work/auto.plan.json" "$work/runtime.plan.json"
cp "$work/auto.predicted.json" "$work/runtime.predicted.json"
for ((i = 1; i <= runs; i++)); do
  for algorithm in auto runtime ring hierarchical; do
    bash "$root/scripts/netns-hosts.sh" with 2 1gbit 2 -- -x GLIBC_TUNABLES="$tunables" \
      "$paraxis" train "${model[@]}" --plan "$work/$algorithm.plan.json" --data synthetic --synthetic-samples 4096 \
      --iterations $((iterations + 3)) --threads 1 --quiet --report "$work/$algorithm.$i.json" >/dev/null
    echo "  round $i: $algorithm done" >&2
  done
done
/usr/bin/python3 - "$work" "$runs" <<'PY'
import json, statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
print(f"ResNet-18 64x64, 32 samples per rank, 2 hosts x 2 ranks at 1 Gbit/s: medians of {runs}")
print(f"  {'--allreduce':<14} {'ran':<14} {'predicted allreduce':>20} {'measured':>10} {'predicted samples/s':>20} {'measured':>10}")
for a in ("auto", "runtime", "ring", "hierarchical"):
    ran = json.load(open(f"{work}/{a}.1.json"))["gradient_allreduce_algorithm"]
    p = json.load(open(f"{work}/{a}.predicted.json"))["estimates"][0]
    reports = [json.load(open(f"{work}/{a}.{i}.json")) for i in range(1, runs + 1)]
    measured = statistics.median(r["time"]["gradient_allreduce"] for r in reports)
    rate = statistics.median(r["samples_per_second"] for r in reports)
    print(f"  {a:<14} {ran:<14} {p['time']['gradient_allreduce'] * 1e3:17.0f} ms {measured * 1e3:7.0f} ms "
          f"{p['samples_per_second']:20.1f} {rate:10.1f}")
PY
