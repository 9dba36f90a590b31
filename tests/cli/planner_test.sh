#!/usr/bin/env bash
# The torch-free planner (issue #17): `paraxis` links neither LibTorch nor MPI, and hands train,
# bench, config and calibrate --quick, whole, to paraxis-run beside it (cli/runtime.hpp).
# Start-up time is measured by scripts/bench-startup.sh, not here.
source "$(dirname "$0")/lib.sh"
runner="$(dirname "$paraxis")/paraxis-run"
heavy='libtorch|libc10|libmpi'

check() {  # check DESCRIPTION COMMAND...: the command succeeds
  local what=$1; shift
  if "$@"; then passed=$((passed + 1)); else echo "FAIL: $what"; failures=$((failures + 1)); fi
}
check "the planner links neither LibTorch nor MPI" bash -c "! ldd '$paraxis' | grep -E '$heavy'"
check "paraxis-run links both (the check above can fail)" \
  bash -c "ldd '$runner' | grep -q libtorch && ldd '$runner' | grep -q libmpi"

expect_ok "Rank +Strategy|strategy" plan --gpus 64 --top 1
expect_ok "LibTorch [0-9.]+" config                  # handed to paraxis-run
expect_ok "--model" train --help                       # train's own help, from paraxis-run
expect_ok "comm" bench --help
expect_error "argument was not expected: --nope" train --nope  # paraxis-run's one-line error, exit 2
expect_ok "epoch 1: train loss" train --model lenet --iterations 2 --threads 1

# Without paraxis-run beside it, the planner still plans, and refuses train in one line.
alone=$(mktemp -d /tmp/paraxis-alone.XXXXXX)
trap 'rm -rf "$alone"' EXIT
cp "$paraxis" "$alone/paraxis"
paraxis="$alone/paraxis"
expect_ok "data" plan --gpus 64 --top 1
expect_error "'train' needs paraxis-run .*not found at .*paraxis-run" train --model lenet
expect_error "'calibrate --quick' needs paraxis-run" calibrate --quick
finish
