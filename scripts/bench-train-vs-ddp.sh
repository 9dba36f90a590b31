#!/usr/bin/env bash
# paraxis train against PyTorch DistributedDataParallel (Debian's python3-torch, gloo) on the
# same models, batch, threads and allocator setting, alternating runs; prints samples/s and
# the ratio paraxis / DDP (medians). Benchmarks, not tests.
#
#   scripts/bench-train-vs-ddp.sh [RUNS] [local|hosts|both]
#
# local: 2 ranks on this machine; hosts: 2 network-namespace hosts joined by a 1 Gbit/s link
# (scripts/netns-hosts.sh). Models: small-cnn and ResNet-18 at 64x64, 32 samples per rank.
# paraxis runs 2-D convolutions channels-last; DDP runs PyTorch's default layout (NCHW) unless
# DDP_CHANNELS_LAST=1, which gives it paraxis's layout too. VARIANT=NAME=VALUE (a paraxis knob's
# variable, e.g. PARAXIS_COMM_THREAD_SLICE=0) also runs paraxis with it, in the same turns, and
# prints its median and its ratio to paraxis's defaults.
set -euo pipefail
runs=${1:-3}
where=${2:-both}
root=$(cd "$(dirname "$0")/.." && pwd)
paraxis=$root/build/paraxis
tunables="glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967296"
iterations=30

launch() {  # launch SETTING PROGRAM ARGS...
  local setting=$1; shift
  if [ "$setting" = local ]; then
    mpirun --allow-run-as-root --bind-to none --mca btl self,vader -np 2 -x GLIBC_TUNABLES="$tunables" "$@"
  else
    bash "$root/scripts/netns-hosts.sh" with 2 1gbit 1 -- -x GLIBC_TUNABLES="$tunables" \
      -x MASTER_ADDR=10.77.0.1 "$@"
  fi
}

paraxis_rate() {  # paraxis_rate SETTING MODEL [NAME=VALUE]
  local json; json=$(mktemp /tmp/paraxis-train.XXXXXX)
  local variant=()
  [ -n "${3:-}" ] && variant=(-x "$3")
  launch "$1" "${variant[@]}" "$paraxis" train --model "$2" --input 64 --classes 10 --data synthetic --synthetic-samples 4096 \
    --batch-per-rank 32 --iterations $((iterations + 3)) --threads 1 --quiet --report "$json" >/dev/null
  /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples_per_second"])' "$json"
  rm -f "$json"
}

ddp_rate() {  # ddp_rate SETTING MODEL
  launch "$1" /usr/bin/python3 "$root/scripts/ddp_peer.py" --model "$2" --size 64 --batch 32 \
    --iterations "$iterations" --threads 1 ${DDP_CHANNELS_LAST:+--channels-last} 2>/dev/null |
    awk '/samples_per_second/ {print $2}'
}

settings=(local hosts)
[ "$where" = both ] || settings=("$where")
for setting in "${settings[@]}"; do
  for model in small-cnn resnet18; do
    ours=(); theirs=(); variants=()
    for ((i = 1; i <= runs; i++)); do
      ours+=("$(paraxis_rate "$setting" "$model")")
      theirs+=("$(ddp_rate "$setting" "$model")")
      [ -n "${VARIANT:-}" ] && variants+=("$(paraxis_rate "$setting" "$model" "$VARIANT")")
      echo "  $setting $model run $i: paraxis ${ours[-1]} samples/s, DDP ${theirs[-1]}${VARIANT:+, paraxis with $VARIANT ${variants[-1]}}" >&2
    done
    /usr/bin/python3 - "$setting" "$model" "${ours[*]}" "${theirs[*]}" "${variants[*]}" "${VARIANT:-}" <<'PY'
import statistics, sys
setting, model = sys.argv[1], sys.argv[2]
ours, theirs = list(map(float, sys.argv[3].split())), list(map(float, sys.argv[4].split()))
o, t = statistics.median(ours), statistics.median(theirs)
print(f"{setting:<6} {model:<10} paraxis {o:8.1f} samples/s   DDP {t:8.1f} samples/s   paraxis/DDP {o / t:.2f}x  (medians of {len(ours)})")
if sys.argv[6]:
    v = statistics.median(map(float, sys.argv[5].split()))
    print(f"{setting:<6} {model:<10} with {sys.argv[6]}: {v:8.1f} samples/s   /DDP {v / t:.2f}x   defaults / it {o / v:.2f}x")
PY
  done
done
