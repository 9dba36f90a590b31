#!/usr/bin/env bash
# train --trace (issue #17): the timeline of every rank, held against the run's own measured
# breakdown by check_trace.py (parses, nests, per-kind times within 5 %), for data parallelism
# with the default forward-priority order (updates deferred into the next forward), with fifo
# (updates as the reductions land, after backward), and for a spatial grid (halo exchanges,
# shuffles and the layer collectives of batch-norm and pooling).
source "$(dirname "$0")/lib.sh" "$@"
here=$(cd "$(dirname "$0")" && pwd)

traced() {  # traced NAME ARGS...: a 2-rank run with --trace and --report, then the check
  local name=$1; shift
  if "${mpirun[@]}" -np 2 "$paraxis" train --iterations 10 --threads 1 --quiet --trace "$work/$name.trace.json" \
       --report "$work/$name.json" "$@" >/dev/null 2>"$work/$name.err" &&
     /usr/bin/python3 "$here/check_trace.py" "$work/$name.trace.json" "$work/$name.json" 2 >"$work/$name.check"; then
    pass
  else
    fail "$name: $(tail -3 "$work/$name.err" "$work/$name.check" 2>/dev/null)"
  fi
  grep -E "^(forward|halo) " "$work/$name.check" | sed "s/^/$name: /"
}
traced "lenet data=2, priority" --model lenet --reduce-order priority
traced "lenet data=2, fifo" --model lenet --reduce-order fifo
traced "small-cnn h=2" --model small-cnn --input 32x32 --grid h=2 --batch-per-rank 4
finish
