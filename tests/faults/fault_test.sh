#!/usr/bin/env bash
# Fault injection (issue #13): a stalled rank (SIGSTOP) and a killed rank end the job within
# twice the deadline with a line naming the rank and the call; every output on a full disk
# (a full tmpfs, and /dev/full) ends with exit 1, one line naming it, and no partial file;
# corrupted and truncated checkpoints are detected on every rank and fall back; a diverging
# run stops on every rank; ranks started with different options are caught.
# Usage: fault_test.sh PARAXIS MPIRUN [MPIRUN FLAGS...]
source "$(dirname "$0")/../train/lib.sh" "$@"
deadline=3

# elapsed START: seconds since START (date +%s.%N).
elapsed() { awk "BEGIN {print $(date +%s.%N) - $1}"; }

# stall NAME VICTIM-SIGNAL ARGS...: start 2 ranks with the deadline, wait until both train
# (a checkpoint exists) or 4 s for other commands, send the signal to one rank, and expect
# mpirun to end non-zero within twice the deadline (plus 2 s for mpirun's teardown) with a
# line naming the rank: the deadline's, or mpirun's own when it saw the rank die first.
stall() {
  local name=$1 signal=$2; shift 2
  rm -rf "$work/stall"
  PARAXIS_COMM_DEADLINE=$deadline timeout 120 "${mpirun[@]}" -np 2 "$paraxis" "$@" >"$work/stall.out" 2>&1 &
  local job=$!
  for _ in $(seq 1 300); do  # until both ranks work: a checkpoint, or bench's first row
    [ -f "$work/stall/latest" ] && break
    grep -q "^allreduce" "$work/stall.out" 2>/dev/null && break
    sleep 0.1
  done
  # This job's ranks only (other tests may run paraxis at the same time): mpirun's children.
  local launcher; launcher=$(pgrep -P "$job" | head -1)  # mpirun (or orterun) under timeout
  local ranks; ranks=$(pgrep -P "$launcher" -x "paraxis(-run)?")  # paraxis hands train to paraxis-run (same pid)
  local victim; victim=$(tail -1 <<<"$ranks")
  if [ -z "$victim" ]; then fail "$name: no rank to stop"; kill "$job"; wait "$job"; return; fi
  local start; start=$(date +%s.%N)
  kill "-$signal" "$victim"
  wait "$job"; local rc=$?
  local took; took=$(elapsed "$start")
  for pid in $ranks; do kill -CONT "$pid" 2>/dev/null; kill -9 "$pid" 2>/dev/null; done
  local line; line=$(grep -m1 -E "^paraxis: .*(deadline|did not take part|not reduced).*rank [0-9]|process rank [0-9]+ .* exited on signal" "$work/stall.out")
  echo "$name: mpirun exit $rc after ${took}s: ${line:-no deadline line}"
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then fail "$name: expected a non-zero exit before the timeout"
  elif awk "BEGIN {exit !($took > 2 * $deadline + 2)}"; then fail "$name: the job outlived twice the deadline"
  elif [ -z "$line" ]; then fail "$name: no line naming the rank and the call"; cat "$work/stall.out" | tail -5
  else pass; fi
}

echo "== stalled and killed ranks (deadline ${deadline} s)"
stall "train, a rank stopped" STOP train --model lenet --epochs 100 --quiet --checkpoint "$work/stall" --checkpoint-every 5
stall "train, a rank killed" KILL train --model lenet --epochs 100 --quiet --checkpoint "$work/stall" --checkpoint-every 5
stall "bench comm, a rank stopped" STOP bench comm --op allreduce --max-bytes 256MiB --trials 50

# full_output NAME PATH ARGS...: the command writing to PATH ends with exit 1, one stderr line
# naming PATH, and leaves neither PATH nor a temporary beside it.
full_output() {
  local name=$1 path=$2; shift 2
  local err rc
  err=$("$paraxis" "$@" 2>&1 >/dev/null); rc=$?
  local left; left=$(ls -A "$(dirname "$path")" 2>/dev/null | grep -v '^filler$')
  if [ "$rc" -ne 1 ] || [ "$(printf '%s' "$err" | grep -c '')" -ne 1 ] || ! grep -qF "$path" <<<"$err"; then
    fail "$name: expected exit 1 and one line naming $path; exit $rc: $err"
  elif [ -n "$left" ]; then fail "$name: left behind: $left"
  else pass; fi
}

echo "== outputs on a full file system"
full=$work/full
mkdir -p "$full"
if mount -t tmpfs -o size=512k tmpfs "$full" 2>"$work/mount.err"; then
  trap 'umount "$full" 2>/dev/null; rm -rf "$work"' EXIT
  dd if=/dev/zero of="$full/filler" bs=4k 2>/dev/null  # until the file system is full
  full_output "plan --emit" "$full/strategy.json" plan --model lenet --gpus 2 --emit "$full/strategy.json"
  full_output "bench compute --out" "$full/fitted.yaml" bench compute --model lenet --repeats 1 --out "$full/fitted.yaml"
  full_output "calibrate --out" "$full/cal.yaml" calibrate --measured "$(dirname "$0")/../data/paradl_abci_resnet50_runs.csv" --out "$full/cal.yaml"
  full_output "train --report" "$full/report.json" train --iterations 2 --batch-per-rank 8 --quiet --report "$full/report.json"
  full_output "train --weights-out" "$full/w.bin" train --iterations 2 --batch-per-rank 8 --quiet --weights-out "$full/w.bin"
  full_output "train --checkpoint" "$full/ck" train --iterations 4 --batch-per-rank 8 --quiet --checkpoint "$full/ck" --checkpoint-every 2
else
  fail "cannot mount a tmpfs to fill ($(cat "$work/mount.err")); the full-disk cases did not run"
fi
# A device is written in place: /dev/full fails and stays a device (a rename would replace it).
for args in "plan --model lenet --gpus 2 --emit /dev/full" "train --iterations 2 --batch-per-rank 8 --quiet --report /dev/full"; do
  err=$($paraxis $args 2>&1 >/dev/null); rc=$?
  if [ "$rc" -eq 1 ] && grep -q "/dev/full.*No space left on device" <<<"$err" && [ -c /dev/full ]; then pass
  else fail "$args: exit $rc: $err"; [ -c /dev/full ] || { rm -f /dev/full; mknod -m 666 /dev/full c 1 7; }; fi
done
for args in "plan --model lenet --gpus 2" "models show resnet50" "train --iterations 6 --batch-per-rank 8 --json"; do
  err=$($paraxis $args 2>&1 >/dev/full); rc=$?
  if [ "$rc" -eq 1 ] && [ "$(printf '%s' "$err" | grep -c '')" -eq 1 ] && grep -q "standard output: cannot write" <<<"$err"; then pass
  else fail "$args >/dev/full: exit $rc: $err"; fi
done

echo "== corrupted and truncated checkpoints"
run=(train --model lenet --batch-per-rank 8 --quiet --checkpoint "$work/ck" --checkpoint-every 4)
"${mpirun[@]}" -np 2 "$paraxis" "${run[@]}" --iterations 8 >/dev/null 2>&1 || fail "the checkpointed run"
/usr/bin/python3 -c "
import sys; f = open(sys.argv[1], 'r+b'); f.seek(4096); f.write(b'\xff' * 64)" "$work/ck/step-8/rank-1.pt"
out=$("${mpirun[@]}" -np 2 "$paraxis" "${run[@]}" --iterations 12 --resume "$work/ck" 2>&1); rc=$?
if [ "$rc" -eq 0 ] && grep -q "step-8 is unusable (rank 1: .*checksum mismatch.*); falling back to step-4" <<<"$out"; then pass
else fail "a corrupted rank file: exit $rc: $(grep paraxis: <<<"$out" | head -2)"; fi
truncate -s 1000 "$work/ck/step-12/rank-0.pt"
out=$("${mpirun[@]}" -np 2 "$paraxis" "${run[@]}" --iterations 16 --resume "$work/ck" 2>&1); rc=$?
if [ "$rc" -eq 0 ] && grep -q "step-12 is unusable (rank 0: .*truncated" <<<"$out" && grep -q "falling back to step-8" <<<"$out"; then pass
else fail "a truncated rank file: exit $rc: $(grep paraxis: <<<"$out" | head -2)"; fi
out=$("${mpirun[@]}" -np 2 "$paraxis" "${run[@]}" --iterations 16 --lr 0.02 --resume "$work/ck" 2>&1); rc=$?
if [ "$rc" -eq 2 ] && grep -q "was written with other options (--lr: (not given) in the checkpoint, 0.02 now)" <<<"$out"; then pass
else fail "a changed learning rate: exit $rc: $(grep paraxis: <<<"$out" | head -2)"; fi

echo "== divergence and disagreement"
out=$("${mpirun[@]}" -np 2 "$paraxis" train --model lenet --lr 1000 --iterations 40 --batch-per-rank 8 --quiet 2>&1); rc=$?
# Every rank stops at the same iteration: a rank left behind would wait out the deadline and say
# so. (mpirun may kill the second rank before it prints its own copy of the line.)
if [ "$rc" -ne 0 ] && grep -q "training diverged at iteration" <<<"$out" && ! grep -q "deadline" <<<"$out"; then pass
else fail "a diverging run on 2 ranks: exit $rc: $(grep paraxis: <<<"$out" | head -2)"; fi
out=$("${mpirun[@]}" -np 1 "$paraxis" train --iterations 4 --batch-per-rank 8 --quiet : \
      -np 1 "$paraxis" train --iterations 4 --batch-per-rank 16 --quiet 2>&1); rc=$?
if [ "$rc" -eq 2 ] && grep -q "ranks disagree on the run's configuration: rank 1: --batch-per-rank is 16 here but 8 on rank 0" <<<"$out" &&
   ! grep -q "deadline" <<<"$out"; then pass
else fail "mismatched --batch-per-rank: exit $rc: $(grep paraxis: <<<"$out" | head -2)"; fi
finish
