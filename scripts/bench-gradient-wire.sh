#!/usr/bin/env bash
# The gradient path on a slow link: paraxis's wire formats against PyTorch DDP with the
# communication hooks a link-bound DDP user reaches for (Debian's python3-torch, gloo).
# Two network-namespace hosts x 1 rank joined by a 1 Gbit/s link (scripts/netns-hosts.sh),
# ResNet-18 at 64x64, 32 samples per rank, 1 thread per rank, the same allocator setting,
# every configuration once per round, rounds alternating; prints medians and the ratios
# issue #15 asks for. A benchmark, not a test.
#
#   scripts/bench-gradient-wire.sh [RUNS] [MODEL] [ITERATIONS]     (defaults 5 resnet18 12)
#   CONFIGS="paraxis-fp16 ddp-fp16-hook" scripts/bench-gradient-wire.sh ...   (a subset)
#
# Configurations: paraxis fp32 / fp16 / fp16 with the scalar conversions / chunk-sparse at
# density 0.1 overlapped with backward and after it (no warm-up: the steady state after it);
# DDP fp32 / fp16_compress_hook / powerSGD_hook rank 1 and 4 (compressing from the first timed
# iteration).
set -euo pipefail
runs=${1:-5}
model=${2:-resnet18}
iterations=${3:-12}
root=$(cd "$(dirname "$0")/.." && pwd)
paraxis=$root/build/paraxis
tunables="glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967296"

launch() {  # launch PROGRAM ARGS...: 2 hosts x 1 rank at 1 Gbit/s
  bash "$root/scripts/netns-hosts.sh" with 2 1gbit 1 -- -x GLIBC_TUNABLES="$tunables" \
    -x MASTER_ADDR=10.77.0.1 -x PARAXIS_WIRE_CONVERSION_PATH "$@"
}

paraxis_rate() {  # paraxis_rate TRAIN-ARGS...
  local json; json=$(mktemp /tmp/paraxis-wire.XXXXXX)
  launch "$paraxis" train --model "$model" --input 64 --classes 10 --data synthetic --synthetic-samples 4096 \
    --batch-per-rank 32 --iterations $((iterations + 3)) --threads 1 --quiet --report "$json" "$@" >/dev/null
  /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples_per_second"])' "$json"
  rm -f "$json"
}

ddp_rate() {  # ddp_rate PEER-ARGS...
  launch /usr/bin/python3 "$root/scripts/ddp_peer.py" --model "$model" --size 64 --batch 32 \
    --iterations "$iterations" --threads 1 "$@" 2>/dev/null | awk '/samples_per_second/ {print $2}'
}

run_config() {  # run_config NAME
  case "$1" in
    paraxis-fp32) PARAXIS_WIRE_CONVERSION_PATH=auto paraxis_rate --wire fp32 ;;
    paraxis-fp16) PARAXIS_WIRE_CONVERSION_PATH=auto paraxis_rate --wire fp16 ;;
    paraxis-fp16-scalar) PARAXIS_WIRE_CONVERSION_PATH=scalar paraxis_rate --wire fp16 ;;
    paraxis-sparse-0.1) PARAXIS_WIRE_CONVERSION_PATH=auto paraxis_rate --wire chunk-sparse --density 0.1 \
                          --sparse-warmup-epochs 0 ;;
    paraxis-sparse-0.1-after-backward) PARAXIS_WIRE_CONVERSION_PATH=auto paraxis_rate --wire chunk-sparse \
                          --density 0.1 --sparse-warmup-epochs 0 --no-overlap ;;
    ddp-fp32) PARAXIS_WIRE_CONVERSION_PATH=auto ddp_rate --hook none ;;
    ddp-fp16-hook) PARAXIS_WIRE_CONVERSION_PATH=auto ddp_rate --hook fp16 ;;
    ddp-powersgd-1) PARAXIS_WIRE_CONVERSION_PATH=auto ddp_rate --hook powersgd --powersgd-rank 1 ;;
    ddp-powersgd-4) PARAXIS_WIRE_CONVERSION_PATH=auto ddp_rate --hook powersgd --powersgd-rank 4 ;;
  esac
}

all="paraxis-fp32 paraxis-fp16 paraxis-fp16-scalar paraxis-sparse-0.1 paraxis-sparse-0.1-after-backward ddp-fp32 ddp-fp16-hook ddp-powersgd-1 ddp-powersgd-4"
read -r -a configs <<<"${CONFIGS:-$all}"
results=$(mktemp /tmp/paraxis-wire-results.XXXXXX)
for ((i = 1; i <= runs; i++)); do
  for config in "${configs[@]}"; do
    rate=$(run_config "$config")
    echo "$config $rate" >>"$results"
    echo "  round $i: $config $rate samples/s" >&2
  done
done
/usr/bin/python3 - "$results" "$model" <<'PY'
import collections, statistics, sys
rates = collections.defaultdict(list)
for line in open(sys.argv[1]):
    name, value = line.split()
    rates[name].append(float(value))
median = {name: statistics.median(v) for name, v in rates.items()}
print(f"{sys.argv[2]} at 64x64, 32 samples per rank, 2 hosts x 1 rank at 1 Gbit/s: medians of {len(next(iter(rates.values())))}")
for name, values in rates.items():
    print(f"  {name:<34} {median[name]:8.1f} samples/s   runs: {' '.join(f'{v:.1f}' for v in values)}")
def ratio(a, b):
    if a in median and b in median:
        print(f"  {a} / {b}: {median[a] / median[b]:.2f}x")
ratio("paraxis-fp16", "paraxis-fp32")
ratio("paraxis-fp16", "ddp-fp16-hook")
ratio("paraxis-fp16", "paraxis-fp16-scalar")
ratio("paraxis-sparse-0.1", "ddp-powersgd-4")
ratio("paraxis-sparse-0.1", "ddp-powersgd-1")
ratio("paraxis-sparse-0.1", "paraxis-sparse-0.1-after-backward")
ratio("paraxis-fp32", "ddp-fp32")
PY
rm -f "$results"
