#!/usr/bin/env bash
# LeNet on Fashion-MNIST (Debian's dataset-fashion-mnist), 2 ranks: dense training reaches at
# least 85 % test accuracy within its epochs, and chunk-sparse at 10 % density after one dense
# warm-up epoch ends within 2 points of dense; and spatial training (LeNet's rows split over 2
# ranks, h=2, the same global batch and learning rate) ends within 1 point of dense.
set -u
paraxis=${1:?usage: convergence_test.sh PARAXIS MPIRUN [MPIRUN FLAGS...]}
shift
out=$(mktemp -d /tmp/paraxis-convergence.XXXXXX)
trap 'rm -rf "$out"' EXIT
common=(train --model lenet --data fashion-mnist --epochs 2 --batch-per-rank 32 --lr 0.02 --threads 1 --quiet)
"$@" -np 2 "$paraxis" "${common[@]}" --report "$out/dense.json" || { echo "FAIL: dense run"; exit 1; }
"$@" -np 2 "$paraxis" "${common[@]}" --density 0.1 --sparse-warmup-epochs 1 --report "$out/sparse.json" ||
  { echo "FAIL: sparse run"; exit 1; }
# One replica of the same global batch (64) and learning rate (2 x 0.02) as the dense run.
"$@" -np 2 "$paraxis" train --model lenet --data fashion-mnist --epochs 2 --batch-per-rank 64 --lr 0.04 \
  --no-lr-scaling --threads 1 --quiet --grid h=2 --report "$out/spatial.json" || { echo "FAIL: spatial run"; exit 1; }
/usr/bin/python3 - "$out" <<'PY'
import json, sys
dense = json.load(open(sys.argv[1] + "/dense.json"))
sparse = json.load(open(sys.argv[1] + "/sparse.json"))
spatial = json.load(open(sys.argv[1] + "/spatial.json"))
d = [e["test_accuracy"] for e in dense["epochs"]]
s = [e["test_accuracy"] for e in sparse["epochs"]]
h = [e["test_accuracy"] for e in spatial["epochs"]]
print("dense test accuracy by epoch:", ", ".join(f"{a:.2%}" for a in d), f"({dense['samples_per_second']:.0f} samples/s)")
print("sparse (10% after 1 dense epoch):", ", ".join(f"{a:.2%}" for a in s), f"({sparse['samples_per_second']:.0f} samples/s)")
print("spatial (h=2):", ", ".join(f"{a:.2%}" for a in h), f"({spatial['samples_per_second']:.0f} samples/s)")
failures = 0
if dense["ranks"] != 2 or sparse["ranks"] != 2:
    print("FAIL: expected 2 ranks"); failures += 1
if max(d) < 0.85:
    print("FAIL: dense training stayed below 85%"); failures += 1
if abs(s[-1] - d[-1]) > 0.02:
    print("FAIL: chunk-sparse ended more than 2 points from dense"); failures += 1
if spatial["strategy"]["name"] != "spatial" or spatial["global_batch"] != dense["global_batch"]:
    print("FAIL: the spatial run did not run h=2 at the dense run's global batch"); failures += 1
if abs(h[-1] - d[-1]) > 0.01:
    print("FAIL: spatial training ended more than 1 point from dense"); failures += 1
print(f"{4 - failures if failures < 4 else 0} passed, {failures} failed")
sys.exit(1 if failures else 0)
PY
