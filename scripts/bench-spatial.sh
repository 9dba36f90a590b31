#!/usr/bin/env bash
# Spatial training against the alternatives a user has on this machine, alternating runs;
# prints median iteration times, the ratios the spatial issue asks for, per-rank peak step
# memory, and the oracle's prediction of each run (paraxis validate on its report). A
# benchmark, not a test.
#
#   scripts/bench-spatial.sh [RUNS] [local|hosts|both] [MODEL INPUT GRID]
#
# Default: CosmoFlow at 128^3, one sample per iteration. Runs, each RUNS times in turn:
#   one    1 rank, 1 thread            (the baseline)
#   two    2 ranks on GRID (d=2), 1 thread each
#   overlap  as two, with the interior computed while halos travel (train --halo-overlap)
#   wide   1 rank, 2 threads           (what a user would do on this machine instead)
#   hosts  2 network-namespace hosts joined by 1 Gbit/s (scripts/netns-hosts.sh), 1 rank each
set -euo pipefail
runs=${1:-3}
where=${2:-both}
model=${3:-cosmoflow}
input=${4:-128x128x128}
grid=${5:-d=2}
root=$(cd "$(dirname "$0")/.." && pwd)
paraxis=$root/build/paraxis
tunables="glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967296"
work=$(mktemp -d /tmp/paraxis-bench-spatial.XXXXXX)
trap 'rm -rf "$work"' EXIT
common=(train --model "$model" --input "$input" --batch-per-rank 1 --iterations 7 --synthetic-samples 8 --quiet)

run() {  # run KIND INDEX: one training run, its report in $work/KIND.INDEX.json
  local kind=$1 out="$work/$1.$2.json"
  case $kind in
    one) GLIBC_TUNABLES=$tunables "$paraxis" "${common[@]}" --threads 1 --report "$out" ;;
    overlap) mpirun --allow-run-as-root --bind-to none --mca btl self,vader -np 2 -x GLIBC_TUNABLES="$tunables" \
           "$paraxis" "${common[@]}" --threads 1 --grid "$grid" --halo-overlap --report "$out" ;;
    wide) GLIBC_TUNABLES=$tunables "$paraxis" "${common[@]}" --threads 2 --report "$out" ;;
    two) mpirun --allow-run-as-root --bind-to none --mca btl self,vader -np 2 -x GLIBC_TUNABLES="$tunables" \
           "$paraxis" "${common[@]}" --threads 1 --grid "$grid" --report "$out" ;;
    hosts) bash "$root/scripts/netns-hosts.sh" with 2 1gbit 1 -- -x GLIBC_TUNABLES="$tunables" \
             "$paraxis" "${common[@]}" --threads 1 --grid "$grid" --report "$out" ;;
  esac >/dev/null
}

kinds=(one two overlap wide)
[ "$where" = local ] || kinds+=(hosts)
[ "$where" = hosts ] && kinds=(one hosts)
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
memory = {k: statistics.median(r["peak_step_bytes"] for r in reports(k)) for k in kinds}
for k in kinds:
    t = statistics.median(r["time"]["halo"] for r in reports(k)) * 1e3
    print(f"{k:<6} {seconds[k]:7.3f} s/iteration   peak step memory {memory[k] / 2**20:8.1f} MiB per rank   halo {t:6.1f} ms")
for k, bound in (("two", "0.6x"), ("overlap", "-"), ("hosts", "0.65x")):
    if k in seconds:
        paired = statistics.median(a["samples_per_second"] / b["samples_per_second"] for a, b in zip(reports("one"), reports(k)))
        print(f"{k} / one = {seconds[k] / seconds['one']:.2f}x of the medians, {paired:.2f}x median of the rounds (issue's bound {bound})")
if "two" in seconds and "wide" in seconds:
    print(f"two / wide = {seconds['two'] / seconds['wide']:.2f}x (issue's bound 1.0x)")
if "two" in memory:
    print(f"peak step memory two / one = {memory['two'] / memory['one']:.2f}x (issue's bound 0.6x)")
PY

echo "the oracle's predictions (cluster 'local'), from the last run of each kind:"
for kind in "${kinds[@]}"; do
  "$paraxis" validate --measured "$work/$kind.$runs.json" --cluster local 2>&1 | sed "s/^/  $kind: /" | tail -3
done
