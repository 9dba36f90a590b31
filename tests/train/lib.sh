# The set-up of the training scripts ctest runs (source lib.sh "$@" first): `paraxis`, the
# `mpirun` command line as an array, `work` (a temporary directory, removed on exit), and the
# tally: pass, fail MESSAGE, finish (prints "N passed, M failed", exits non-zero on a failure);
# and the equivalence check of the grid scripts: weights, difference, equivalent.
set -u
paraxis=${1:?usage: SCRIPT PARAXIS MPIRUN [MPIRUN FLAGS...]}
shift
mpirun=("$@")
work=$(mktemp -d /tmp/paraxis-train.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
passed=0
pass() { passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
finish() {
  echo "$passed passed, $failures failed"
  [ "$failures" -eq 0 ]
  exit $?
}

# own_thread_slice: the slice communication threads run with by default, as the kernel reads it
# back: the comm_thread_slice knob's 100 us (0.0001) where Linux gives a thread a slice of its own
# (6.12 and later), else 0.
own_thread_slice() {
  /usr/bin/python3 -c "import os; r = os.uname().release.split('.'); print('0.0001' if (int(r[0]), int(r[1].split('-')[0])) >= (6, 12) else '0')"
}

# difference A B: the largest difference of two raw float32 weight files, relative to the largest weight.
difference() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import sys, numpy  # Debian's interpreter has numpy (the first python3 on PATH may not); VGG: 10^8 weights
a, b = (numpy.fromfile(path, dtype=numpy.float32).astype(numpy.float64) for path in sys.argv[1:3])
assert a.size == b.size > 0, (a.size, b.size)
print(numpy.abs(a - b).max() / numpy.abs(b).max())
PY
}

# weights OUT RANKS ARGS...: train 5 iterations on RANKS ranks (0: without mpirun), weights to OUT.
weights() {
  local out=$1 ranks=$2; shift 2
  local launch=()
  [ "$ranks" -gt 0 ] && launch=("${mpirun[@]}" -np "$ranks")
  "${launch[@]}" "$paraxis" train --iterations 5 --synthetic-samples 64 --quiet --no-lr-scaling --lr 0.01 "$@" \
    --weights-out "$out" >/dev/null
}

# equivalent NAME BOUND REFERENCE-RANKS REFERENCE-ARGS -- RANKS GRID-ARGS: the two runs' weights
# differ by less than BOUND (a number, or "noise": twice what 2 threads instead of 1 change).
equivalent() {
  local name=$1 bound=$2 refRanks=$3; shift 3
  local ref=() grid=()
  while [ "$1" != "--" ]; do ref+=("$1"); shift; done
  shift
  local ranks=$1; shift
  grid=("$@")
  # A reference trained once per script (VGG's takes half a minute), under a name from its arguments.
  local key; key=$(echo "$refRanks ${ref[*]}" | md5sum | cut -c1-12)
  local refWeights=$work/ref.$key.bin
  if [ ! -f "$refWeights" ] && ! weights "$refWeights" "$refRanks" --threads 1 "${ref[@]}"; then
    rm -f "$refWeights"; fail "$name: the reference did not train"; return
  fi
  if ! weights "$work/grid.bin" "$ranks" --threads 1 "${grid[@]}"; then
    fail "$name did not train"; return
  fi
  if [ "$bound" = noise ]; then
    weights "$work/threads.bin" "$refRanks" --threads 2 "${ref[@]}" || { fail "$name with 2 threads did not train"; return; }
    bound=$(python3 -c "import sys; print(2 * float(sys.argv[1]))" "$(difference "$refWeights" "$work/threads.bin")")
  fi
  local got; got=$(difference "$refWeights" "$work/grid.bin")
  echo "$name: weights differ by $got of the largest (bound $bound)"
  if python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)" "$got" "$bound"; then
    pass
  else
    fail "$name"
  fi
}
