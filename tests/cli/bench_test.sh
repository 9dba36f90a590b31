#!/usr/bin/env bash
# paraxis bench compute: layer timings and the fitted device.
source "$(dirname "$0")/lib.sh" "$@"

expect_error "--out /nonexistent/x.yaml: the folder '/nonexistent' does not exist" bench compute --out /nonexistent/x.yaml
fitted=$(mktemp /tmp/paraxis-fitted.XXXXXX.yaml)
expect_ok "wrote .*paraxis-fitted" bench compute --model lenet,small-cnn --batch 4 --repeats 1 --out "$fitted"
expect_ok "device fitted by paraxis bench compute" clusters show "$fitted"
rm -f "$fitted"
expect_error "--batch: must be in \[1, 1048576\], found .0." bench compute --model lenet --batch 0
finish
