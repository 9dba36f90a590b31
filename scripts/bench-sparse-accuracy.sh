#!/usr/bin/env bash
# Compressed gradients on real data: LeNet on Fashion-MNIST (Debian's dataset-fashion-mnist)
# on 2 network-namespace hosts x 1 rank at 1 Gbit/s, 32 samples per rank, 1 thread per rank:
# paraxis dense and chunk-sparse at density 0.1, PyTorch DDP dense and with powerSGD_hook
# rank 4. Each compressor starts after the same dense warm-up (WARMUP epochs: paraxis's
# --sparse-warmup-epochs, PowerSGD's start_powerSGD_iter). Prints the test accuracy after
# every epoch, the gap to dense at the end, and the time each reached the lower final
# accuracy of the two dense runs (time to the same accuracy). A benchmark, not a test.
#
#   scripts/bench-sparse-accuracy.sh [EPOCHS] [WARMUP] [SEEDS]     (defaults 3 1 1)
#
# SEEDS > 1 repeats every configuration with seeds 1..SEEDS (weights and shuffles), rounds
# alternating, and reports per configuration the median accuracy by epoch and the median over
# seeds of its final gap to the dense run of the same framework and seed: one 3-epoch run
# moves by ~0.5 points from seed to seed.
#
# Learning rate: paraxis --lr 0.02 per rank, scaled by the 2 ranks; DDP 0.04 (both average
# the gradients over ranks); momentum 0.9, no weight decay.
set -euo pipefail
epochs=${1:-3}
warmup=${2:-1}
seeds=${3:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
paraxis=$root/build/paraxis
tunables="glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967296"
out=$(mktemp -d /tmp/paraxis-accuracy.XXXXXX)
trap 'rm -rf "$out"' EXIT
per_epoch=$((60000 / 2 / 32))  # iterations per epoch on 2 ranks

launch() {
  bash "$root/scripts/netns-hosts.sh" with 2 1gbit 1 -- -x GLIBC_TUNABLES="$tunables" -x MASTER_ADDR=10.77.0.1 "$@"
}

paraxis_run() {  # paraxis_run NAME SEED TRAIN-ARGS...
  local name=$1.$2 seed=$2; shift 2
  launch "$paraxis" train --model lenet --data fashion-mnist --epochs "$epochs" --batch-per-rank 32 --lr 0.02 \
    --threads 1 --quiet --seed "$seed" --report "$out/$name.json" "$@" >/dev/null
  /usr/bin/python3 -c '
import json, sys
for e in json.load(open(sys.argv[1]))["epochs"]:
    print(json.dumps({"epoch": e["epoch"], "test_accuracy": e["test_accuracy"], "seconds": e["seconds"]}))' \
    "$out/$name.json" >"$out/$name.lines"
  # paraxis reports each epoch's own seconds: make them cumulative like the peer's.
  /usr/bin/python3 -c '
import json, sys
total = 0
lines = [json.loads(l) for l in open(sys.argv[1])]
with open(sys.argv[1], "w") as f:
    for e in lines:
        total += e["seconds"]; e["seconds"] = total; f.write(json.dumps(e) + "\n")' "$out/$name.lines"
  echo "  $name done" >&2
}

ddp_run() {  # ddp_run NAME SEED PEER-ARGS...
  local name=$1.$2 seed=$2; shift 2
  launch /usr/bin/python3 "$root/scripts/ddp_peer.py" --epochs "$epochs" --batch 32 --lr 0.04 --threads 1 --seed "$seed" "$@" \
    2>/dev/null | grep '^{' >"$out/$name.lines"
  echo "  $name done" >&2
}

for ((seed = 1; seed <= seeds; seed++)); do
  paraxis_run paraxis-dense "$seed"
  paraxis_run paraxis-sparse-0.1 "$seed" --wire chunk-sparse --density 0.1 --sparse-warmup-epochs "$warmup"
  ddp_run ddp-dense "$seed" --hook none
  ddp_run ddp-powersgd-4 "$seed" --hook powersgd --powersgd-rank 4 --powersgd-start $((warmup * per_epoch))
done
/usr/bin/python3 - "$out" "$warmup" "$seeds" <<'PY'
import json, statistics, sys
out, warmup, seeds = sys.argv[1], sys.argv[2], int(sys.argv[3])
names = ("paraxis-dense", "paraxis-sparse-0.1", "ddp-dense", "ddp-powersgd-4")
runs = {n: [[json.loads(l) for l in open(f"{out}/{n}.{s}.lines")] for s in range(1, seeds + 1)] for n in names}
# Per configuration and epoch: the median over seeds of the accuracy and of the seconds so far.
median = {n: [{"epoch": e[0]["epoch"], "test_accuracy": statistics.median(x["test_accuracy"] for x in e),
               "seconds": statistics.median(x["seconds"] for x in e)} for e in zip(*runs[n])] for n in names}
print(f"LeNet on Fashion-MNIST, 2 hosts x 1 rank at 1 Gbit/s, compressors after {warmup} dense epoch(s), "
      f"{'median of ' + str(seeds) + ' seeds' if seeds > 1 else 'seed 1'}")
for name, epochs in median.items():
    accs = "  ".join(f"{e['test_accuracy'] * 100:.2f}% ({e['seconds']:.0f} s)" for e in epochs)
    finals = " ".join(f"{r[-1]['test_accuracy'] * 100:.2f}" for r in runs[name])
    print(f"  {name:<20} test accuracy (seconds so far) by epoch: {accs}   final by seed: {finals}")
def gap(compressed, dense):
    gaps = [(c[-1]["test_accuracy"] - d[-1]["test_accuracy"]) * 100 for c, d in zip(runs[compressed], runs[dense])]
    return f"{statistics.median(gaps):+.2f} points" + (f" (by seed: {' '.join(f'{g:+.2f}' for g in gaps)})" if seeds > 1 else "")
print(f"  paraxis chunk-sparse - dense: {gap('paraxis-sparse-0.1', 'paraxis-dense')}")
print(f"  DDP PowerSGD - dense:         {gap('ddp-powersgd-4', 'ddp-dense')}")
target = min(median["paraxis-dense"][-1]["test_accuracy"], median["ddp-dense"][-1]["test_accuracy"])
print(f"  time to {target * 100:.2f}% (the lower of the two dense runs' final accuracies):")
for name, epochs in median.items():
    reached = next((e for e in epochs if e["test_accuracy"] >= target), None)
    when = f"{reached['seconds']:.1f} s (epoch {reached['epoch']})" if reached else "not reached"
    print(f"    {name:<20} {when}")
PY
