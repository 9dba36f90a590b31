#!/usr/bin/env bash
# paraxis bench compute: layer timings and the fitted device; bench convert: the wire's conversions.
source "$(dirname "$0")/lib.sh" "$@"

expect_error "--out /nonexistent/x.yaml: the folder '/nonexistent' does not exist" bench compute --out /nonexistent/x.yaml
fitted=$(mktemp /tmp/paraxis-fitted.XXXXXX.yaml)
expect_ok "wrote .*paraxis-fitted" bench compute --model lenet,small-cnn --batch 4 --repeats 1 --out "$fitted"
# One thread: each step on the CPU clock too, its wall time over that at least 1; with more
# threads the CPU clock would miss LibTorch's others, and the wall clock's figures stand.
expect_ok "time-sharing: a timed step ran [0-9.]+-[0-9.]+x its CPU time on the wall" bench compute --model lenet --batch 1 --repeats 1
expect_ok "time-sharing: not measured \(the layers timed on the wall clock" bench compute --model lenet --batch 1 --repeats 1 --threads 2
expect_ok "device fitted by paraxis bench compute" clusters show "$fitted"
# The timings saved and fitted again: the same device, to the byte, without timing anything.
calls=$(mktemp /tmp/paraxis-calls.XXXXXX.json) refitted=$(mktemp /tmp/paraxis-refitted.XXXXXX.yaml)
expect_ok "wrote .*paraxis-fitted" bench compute --model lenet --batch 4 --repeats 1 --save-calls "$calls" --out "$fitted"
expect_ok "wrote .*paraxis-refitted" bench compute --from-calls "$calls" --out "$refitted"
if diff <(sed -n '/^device:/,/^network:/p' "$fitted") <(sed -n '/^device:/,/^network:/p' "$refitted") >/dev/null &&
   [ "$(sed -n '/^device:/,/^network:/p' "$fitted" | wc -l)" -gt 10 ]; then
  passed=$((passed + 1))
else
  echo "FAIL: bench compute --from-calls fitted another device than the run that saved the calls"; failures=$((failures + 1))
fi
expect_error "--model excludes --from-calls" bench compute --from-calls "$calls" --model lenet
expect_error "/nonexistent/calls.json: cannot read the saved timings" bench compute --from-calls /nonexistent/calls.json
/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); del d["models"][0]["calls"][0]["seconds"]; json.dump(d, open(sys.argv[1], "w"))' "$calls"
expect_error "'models\[0\].calls\[0\].seconds' is missing \(a file written by 'paraxis bench compute --save-calls'\)" \
  bench compute --from-calls "$calls"
expect_error "calibrate: --save-calls needs --quick" calibrate --save-calls "$calls" --measured "$calls"
rm -f "$fitted" "$calls" "$refitted"
expect_error "--batch: must be in \[1, 1048576\], found .0." bench compute --model lenet --batch 0
expect_error "--device: .cuda:x.: expected cpu, cuda or cuda:N" bench compute --model lenet --device cuda:x
expect_error "--device cuda:1: this paraxis is built against a LibTorch without CUDA" bench compute --model lenet --device cuda:1
expect_ok "f16 +scalar +encode" bench convert --mib 1 --trials 1
expect_ok "an allreduce's conversions on the (avx512|avx2|scalar) path" bench convert --mib 1 --trials 1
expect_json_keys bench-convert bench convert --mib 1 --trials 1 --json
expect_error "--mib: must be in \[0.0625, 4096\], found .0." bench convert --mib 0
expect_error "--trials: must be in \[1, 1000\], found .nan." bench convert --trials nan
PARAXIS_WIRE_CONVERSION_PATH=avx9 expect_error "PARAXIS_WIRE_CONVERSION_PATH: expected one of auto, avx512, avx2, scalar, found .avx9." bench convert --mib 1
finish
