#!/usr/bin/env bash
# Kills rank 1 of a 3-rank job mid-run; passes when mpirun exits non-zero and the survivors
# are gone within twice the deadline (plus mpirun's start-up, measured by a 1-rank run).
set -u
mpirun=${1:?usage: kill_test.sh MPIRUN_WITH_FLAGS... -- KILL_TEST}
shift
args=()
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do args+=("$1"); shift; done
shift
program=${1:?missing program}
deadline=2

start=$(date +%s.%N)
"$mpirun" "${args[@]}" -np 1 true >/dev/null 2>&1
startup=$(awk "BEGIN {print $(date +%s.%N) - $start}")

start=$(date +%s.%N)
output=$(timeout 120 "$mpirun" "${args[@]}" -np 3 "$program" "$deadline" 2>&1)
rc=$?
elapsed=$(awk "BEGIN {print $(date +%s.%N) - $start}")
echo "$output" | grep -E "^rank|signal|exited" | head -10
limit=$(awk "BEGIN {print $startup + 2 * $deadline + 1}")
echo "mpirun exit code $rc after ${elapsed}s (start-up ${startup}s, limit ${limit}s)"
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then echo "FAIL: expected a non-zero exit before the timeout"; exit 1; fi
if ! echo "$output" | grep -q "rank 1: killing itself"; then echo "FAIL: rank 1 never reached the kill"; exit 1; fi
if awk "BEGIN {exit !($elapsed > $limit)}"; then echo "FAIL: survivors outlived twice the deadline"; exit 1; fi
echo "1 passed, 0 failed"
