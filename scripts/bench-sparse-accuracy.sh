#!/usr/bin/env bash
# Compressed gradients on real data: LeNet on Fashion-MNIST (Debian's dataset-fashion-mnist)
# on 2 network-namespace hosts x 1 rank at 1 Gbit/s, 32 samples per rank, 1 thread per rank:
# paraxis dense and chunk-sparse at density 0.1, PyTorch DDP dense and with powerSGD_hook
# rank 4. Each compressor starts after the same dense warm-up (WARMUP epochs: paraxis's
# --sparse-warmup-epochs, PowerSGD's start_powerSGD_iter). Prints the test accuracy after
# every epoch, the gap to dense at the end, and the time each reached the lower final
# accuracy of the two dense runs (time to the same accuracy). A benchmark, not a test.
#
#   scripts/bench-sparse-accuracy.sh [EPOCHS] [WARMUP]     (defaults 3 1)
#
# Learning rate: paraxis --lr 0.02 per rank, scaled by the 2 ranks; DDP 0.04 (both average
# the gradients over ranks); momentum 0.9, no weight decay.
set -euo pipefail
epochs=${1:-3}
warmup=${2:-1}
root=$(cd "$(dirname "$0")/.." && pwd)
paraxis=$root/build/paraxis
tunables="glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967296"
out=$(mktemp -d /tmp/paraxis-accuracy.XXXXXX)
trap 'rm -rf "$out"' EXIT
per_epoch=$((60000 / 2 / 32))  # iterations per epoch on 2 ranks

launch() {
  bash "$root/scripts/netns-hosts.sh" with 2 1gbit 1 -- -x GLIBC_TUNABLES="$tunables" -x MASTER_ADDR=10.77.0.1 "$@"
}

paraxis_run() {  # paraxis_run NAME TRAIN-ARGS...
  local name=$1; shift
  launch "$paraxis" train --model lenet --data fashion-mnist --epochs "$epochs" --batch-per-rank 32 --lr 0.02 \
    --threads 1 --quiet --report "$out/$name.json" "$@" >/dev/null
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

ddp_run() {  # ddp_run NAME PEER-ARGS...
  local name=$1; shift
  launch /usr/bin/python3 "$root/scripts/ddp_peer.py" --epochs "$epochs" --batch 32 --lr 0.04 --threads 1 "$@" \
    2>/dev/null | grep '^{' >"$out/$name.lines"
  echo "  $name done" >&2
}

paraxis_run paraxis-dense
paraxis_run paraxis-sparse-0.1 --wire chunk-sparse --density 0.1 --sparse-warmup-epochs "$warmup"
ddp_run ddp-dense --hook none
ddp_run ddp-powersgd-4 --hook powersgd --powersgd-rank 4 --powersgd-start $((warmup * per_epoch))
/usr/bin/python3 - "$out" "$warmup" <<'PY'
import json, sys
out, warmup = sys.argv[1], sys.argv[2]
runs = {n: [json.loads(l) for l in open(f"{out}/{n}.lines")] for n in
        ("paraxis-dense", "paraxis-sparse-0.1", "ddp-dense", "ddp-powersgd-4")}
print(f"LeNet on Fashion-MNIST, 2 hosts x 1 rank at 1 Gbit/s, compressors after {warmup} dense epoch(s)")
for name, epochs in runs.items():
    accs = "  ".join(f"{e['test_accuracy'] * 100:.2f}% ({e['seconds']:.0f} s)" for e in epochs)
    print(f"  {name:<20} test accuracy (seconds so far) by epoch: {accs}")
print(f"  paraxis chunk-sparse - dense: {(runs['paraxis-sparse-0.1'][-1]['test_accuracy'] - runs['paraxis-dense'][-1]['test_accuracy']) * 100:+.2f} points")
print(f"  DDP PowerSGD - dense:         {(runs['ddp-powersgd-4'][-1]['test_accuracy'] - runs['ddp-dense'][-1]['test_accuracy']) * 100:+.2f} points")
target = min(runs["paraxis-dense"][-1]["test_accuracy"], runs["ddp-dense"][-1]["test_accuracy"])
print(f"  time to {target * 100:.2f}% (the lower of the two dense runs' final accuracies):")
for name, epochs in runs.items():
    reached = next((e for e in epochs if e["test_accuracy"] >= target), None)
    when = f"{reached['seconds']:.1f} s (epoch {reached['epoch']})" if reached else "not reached"
    print(f"    {name:<20} {when}")
PY
