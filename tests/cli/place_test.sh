#!/usr/bin/env bash
# paraxis place: a replica's operations on devices. The exact program on a small branching
# model, list scheduling on Inception-v3, the JSON keys, and the user errors: one line, exit 2.
source "$(dirname "$0")/lib.sh" "$@"
mini="$(cd "$(dirname "$0")/../../scripts/models" && pwd)/inception-mini.yaml"

# One run of the default (Inception-v3 on 2 V100s), its report line by line.
out=$("$paraxis" place --method list 2>&1) || { echo "FAIL: paraxis place --method list"; failures=$((failures + 1)); }
for pattern in "inception-v3 \(32 samples\) on 2 devices of dgx1-v100 .*: [0-9]+ units from [0-9]+ layers" \
               "speedup 1\.[0-9]+x" "^1 +[0-9]+ +[0-9]+ +[0-9.]+ ms" "transfers between devices: [1-9][0-9]* "; do
  if grep -qE -- "$pattern" <<<"$out"; then passed=$((passed + 1)); else echo "FAIL: place: no '$pattern'"; failures=$((failures + 1)); fi
done
expect_ok "method: ilp \(GLPK [0-9.]+, (optimal|stopped at its 2 s limit)\)" place --model "$mini" --cluster local --time-limit 2
expect_ok "fwd m1_b2_reduce..m1_b2_relu +[01] " place --model "$mini" --cluster local --method list --operations
expect_json_keys place place --model "$mini" --cluster local --method list --json
expect_error "--devices 16: a replica is placed within one node, and a node of 'dgx1-v100' has 8 devices" place --devices 16
expect_error "--devices: must be in \[1, 64\], found '0'" place --devices 0
expect_error "--method: expected auto, ilp, list or exhaustive, found 'annealing'" place --method annealing
expect_error "exhaustive placement: [0-9]+ operations, more than the 12 it enumerates" place --model "$mini" --method exhaustive
expect_error "unit '.*' needs .*, and no device has that much of its 1 MiB left" place --memory-per-device 1MiB --method list
expect_error "--memory-per-device: expected a size such as 16GiB, found 'lots'" place --memory-per-device lots
expect_error "--time-limit: must be in \(0, 86400\], found '0'" place --time-limit 0
finish
