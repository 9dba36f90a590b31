#!/usr/bin/env bash
# The oracle held against the gradient wire runs (issue #15): on two network-namespace hosts x
# 1 rank joined at 1 Gbit/s, `paraxis calibrate --quick` times the machine (no fit to the runs),
# then one ResNet-18 run per wire format (64x64, 32 samples per rank, 1 thread per rank, the
# setting of scripts/bench-gradient-wire.sh), each validated against the calibrated cluster.
# Prints, per wire, the measured and predicted iteration, the error, and the gradient allreduce
# and its exposed part, measured and predicted. A measurement, not a test (needs root).
#
#   scripts/validate-gradient-wire.sh [ITERATIONS] [WIRES]     (defaults 15 "fp32 fp16 bf16")
#   KEEP=DIR scripts/validate-gradient-wire.sh ...              (keep the cluster and the reports)
set -euo pipefail
iterations=${1:-15}
wires=${2:-fp32 fp16 bf16}
root=$(cd "$(dirname "$0")/.." && pwd)
paraxis=$root/build/paraxis
[ -x "$paraxis" ] || { echo "validate-gradient-wire.sh: $paraxis is not built (make build)" >&2; exit 2; }
[[ $iterations =~ ^[0-9]+$ ]] && [ "$iterations" -ge 6 ] ||
  { echo "validate-gradient-wire.sh: ITERATIONS: expected at least 6 (3 warm up), found '$iterations'" >&2; exit 2; }
work=${KEEP:-$(mktemp -d /tmp/paraxis-wire-validate.XXXXXX)}
mkdir -p "$work"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
tunables="glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=4294967296"

launch() {  # launch PARAXIS-ARGS...: 2 hosts x 1 rank at 1 Gbit/s
  bash "$root/scripts/netns-hosts.sh" with 2 1gbit 1 -- -x GLIBC_TUNABLES="$tunables" "$paraxis" "$@"
}

start=$(date +%s)
launch calibrate --quick --cluster "$root/scripts/clusters/netns-2x1-1gbit.yaml" --out "$work/quick.yaml" \
  >"$work/quick.log" 2>&1 || { echo "validate-gradient-wire.sh: calibrate --quick failed: $(tail -1 "$work/quick.log")" >&2; exit 1; }
echo "  calibrate --quick: $(( $(date +%s) - start )) s" >&2
for wire in $wires; do
  launch train --model resnet18 --input 64 --classes 10 --data synthetic --synthetic-samples 4096 \
    --batch-per-rank 32 --iterations "$iterations" --threads 1 --quiet --wire "$wire" \
    --report "$work/$wire.json" >"$work/$wire.log" 2>&1 ||
    { echo "validate-gradient-wire.sh: train --wire $wire failed: $(tail -1 "$work/$wire.log")" >&2; exit 1; }
  "$paraxis" validate --measured "$work/$wire.json" --cluster "$work/quick.yaml" --json >"$work/$wire.validated"
  echo "  $wire: trained and validated" >&2
done

/usr/bin/python3 - "$work" "$wires" <<'PY'
import json, sys
work, wires = sys.argv[1], sys.argv[2].split()
ms = lambda s: f"{s * 1e3:.0f}"
print("| wire | measured / predicted iteration | error | gradient allreduce, measured / predicted | exposed, measured / predicted |")
print("|---|---|---|---|---|")
errors = []
for wire in wires:
    measured = json.load(open(f"{work}/{wire}.json"))["time"]
    run = json.load(open(f"{work}/{wire}.validated"))["runs"][0]
    predicted = run["predicted"]["time"]
    errors.append(run["error"])
    print(f"| {wire} | {ms(run['measured']['total'])} / {ms(run['predicted']['total'])} ms | {run['error'] * 100:.1f} % | "
          f"{ms(measured['gradient_allreduce'])} / {ms(predicted['gradient_allreduce'])} ms | "
          f"{ms(measured['gradient_exposed'])} / {ms(predicted['gradient_exposed'])} ms |")
print(f"mean absolute error: {sum(errors) / len(errors) * 100:.1f} % over {len(errors)} runs")
PY
