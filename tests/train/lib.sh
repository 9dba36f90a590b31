# The set-up of the training scripts ctest runs (source lib.sh "$@" first): `paraxis`, the
# `mpirun` command line as an array, `work` (a temporary directory, removed on exit), and the
# tally: pass, fail MESSAGE, finish (prints "N passed, M failed", exits non-zero on a failure).
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
