#!/usr/bin/env bash
# Start-up of the planner (issue #17): wall time of `paraxis plan --gpus 64` (the torch-free
# planner) against the same command run by paraxis-run (which loads LibTorch and MPI, as every
# command did before the split), rounds alternating; medians and their ratio. A benchmark,
# not a test.
#
#   scripts/bench-startup.sh [RUNS]     (default 10)
set -euo pipefail
runs=${1:-10}
root=$(cd "$(dirname "$0")/.." && pwd)
for exe in paraxis paraxis-run; do
  [ -x "$root/build/$exe" ] || { echo "bench-startup.sh: $root/build/$exe is not built (make build)" >&2; exit 2; }
done
case "$runs" in ''|*[!0-9]*|0) echo "bench-startup.sh: RUNS must be a positive integer, not '$runs'" >&2; exit 2 ;; esac

micros() {  # micros EXE: wall time of one `EXE plan --gpus 64`, in microseconds
  local start end
  start=$(date +%s%N)
  "$root/build/$1" plan --gpus 64 >/dev/null
  end=$(date +%s%N)
  echo $(((end - start) / 1000))
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -a planner runner
for ((i = 0; i < runs; i++)); do
  planner+=("$(micros paraxis)")
  runner+=("$(micros paraxis-run)")
done
p=$(printf '%s\n' "${planner[@]}" | median)
r=$(printf '%s\n' "${runner[@]}" | median)
printf 'plan --gpus 64, median of %d alternating runs\n' "$runs"
awk -v p="$p" -v r="$r" 'BEGIN {
  printf "  paraxis (planner, no LibTorch/MPI)  %8.1f ms\n", p / 1000
  printf "  paraxis-run (LibTorch and MPI)      %8.1f ms\n", r / 1000
  printf "  the planner starts %.1fx faster\n", r / p }'
