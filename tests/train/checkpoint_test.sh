#!/usr/bin/env bash
# Kill a 2-rank run after it has written a checkpoint, resume it, and compare the final
# weights with an uninterrupted run's: they must be bit-identical.
set -u
paraxis=${1:?usage: checkpoint_test.sh PARAXIS MPIRUN [MPIRUN FLAGS...]}
shift
work=$(mktemp -d /tmp/paraxis-checkpoint.XXXXXX)
trap 'rm -rf "$work"' EXIT
run=(train --model small-cnn --data synthetic --synthetic-samples 1024 --batch-per-rank 8 --iterations 80 --threads 1 --quiet)

"$@" -np 2 "$paraxis" "${run[@]}" --weights-out "$work/uninterrupted.bin" >/dev/null || { echo "FAIL: reference run"; exit 1; }

setsid "$@" -np 2 "$paraxis" "${run[@]}" --checkpoint "$work/ck" --checkpoint-every 10 >/dev/null 2>&1 &
job=$!
for _ in $(seq 1 600); do
  if [ -f "$work/ck/latest" ] && ! grep -q "step-10$" "$work/ck/latest"; then break; fi
  sleep 0.05
done
kill -9 -- "-$job" 2>/dev/null
wait "$job" 2>/dev/null
latest=$(cat "$work/ck/latest" 2>/dev/null)
[ -n "$latest" ] || { echo "FAIL: no checkpoint was written before the kill"; exit 1; }
echo "killed the run after checkpoint $latest"

"$@" -np 2 "$paraxis" "${run[@]}" --resume "$work/ck" --weights-out "$work/resumed.bin" >/dev/null ||
  { echo "FAIL: resume"; exit 1; }
if cmp -s "$work/uninterrupted.bin" "$work/resumed.bin"; then
  echo "resumed weights equal the uninterrupted run's ($(stat -c %s "$work/resumed.bin") bytes)"
  echo "1 passed, 0 failed"
else
  echo "FAIL: resumed weights differ from the uninterrupted run's"
  echo "0 passed, 1 failed"
  exit 1
fi
