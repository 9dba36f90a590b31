#!/usr/bin/env bash
# Models whose loss is not one class per sample train too, and learn: CosmoFlow (3-D
# regression, mse_loss) data-parallel on 2 ranks, and the mesh FCN (a class per output
# position, softmax_loss) on one; both again split spatially over 2 ranks (d=2, h=2).
# Synthetic data carries a learnable signal for each.
source "$(dirname "$0")/lib.sh" "$@"

# check NAME FILE PYTHON-CONDITION: the condition over the report's epochs `e` must hold.
check() {
  if python3 - "$2" "$3" <<'PY'
import json, math, sys
e = json.load(open(sys.argv[1]))["epochs"]
assert all(math.isfinite(x["train_loss"]) and math.isfinite(x["test_loss"]) for x in e), e
assert eval(sys.argv[2]), e
PY
  then pass; else fail "$1"; fi
}

if "${mpirun[@]}" -np 2 "$paraxis" train --model cosmoflow --input 32x32x32 --epochs 3 --batch-per-rank 4 --lr 0.002 \
     --synthetic-samples 64 --threads 1 --quiet --report "$work/cosmoflow.json" >/dev/null; then
  check "cosmoflow: regression loss falls, no accuracy reported" "$work/cosmoflow.json" \
    'e[-1]["train_loss"] < e[0]["train_loss"] and e[-1]["test_loss"] < e[0]["test_loss"] and e[0]["test_accuracy"] is None'
else
  fail "cosmoflow did not train"
fi

if "$paraxis" train --model mesh-fcn --input 32x32 --epochs 2 --batch-per-rank 8 --lr 0.05 --synthetic-samples 128 \
     --quiet --report "$work/mesh.json" >/dev/null; then
  check "mesh-fcn: per-position loss falls, accuracy over positions rises" "$work/mesh.json" \
    'e[-1]["train_loss"] < e[0]["train_loss"] and e[-1]["test_accuracy"] > 0.8 > e[0]["test_accuracy"] - 0.2'
else
  fail "mesh-fcn did not train"
fi

if "${mpirun[@]}" -np 2 "$paraxis" train --model cosmoflow --input 32x32x32 --epochs 3 --batch-per-rank 4 --lr 0.002 \
     --synthetic-samples 64 --threads 1 --quiet --grid d=2 --report "$work/cosmoflow-d2.json" >/dev/null; then
  check "cosmoflow on d=2: regression loss falls" "$work/cosmoflow-d2.json" \
    'e[-1]["train_loss"] < e[0]["train_loss"] and e[-1]["test_loss"] < e[0]["test_loss"]'
else
  fail "cosmoflow did not train on d=2"
fi

if "${mpirun[@]}" -np 2 "$paraxis" train --model mesh-fcn --input 32x32 --epochs 2 --batch-per-rank 8 --lr 0.05 \
     --synthetic-samples 128 --threads 1 --quiet --grid h=2 --report "$work/mesh-h2.json" >/dev/null; then
  check "mesh-fcn on h=2: per-position loss falls, accuracy over positions rises" "$work/mesh-h2.json" \
    'e[-1]["train_loss"] < e[0]["train_loss"] and e[-1]["test_accuracy"] > 0.8 > e[0]["test_accuracy"] - 0.2'
else
  fail "mesh-fcn did not train on h=2"
fi

finish
