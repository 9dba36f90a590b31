#!/usr/bin/env bash
# train --trace (issue #17): the timeline of every rank, held against the run's own measured
# breakdown by check_trace.py (parses, nests, per-kind times within 5 %), for data parallelism
# with the default forward-priority order (updates deferred into the next forward), with fifo
# (updates as the reductions land, after backward), and for a spatial grid (halo exchanges,
# shuffles and the layer collectives of batch-norm and pooling). A pipeline's report holds its
# busiest stage's breakdown.
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

# validate --trace on the spatial run: every convolution timed, its halo exchanges in its
# communication (not its compute), and no layer's backward the bulk of the pass (an interval
# is the layer's own, not the rest of the backward: the loss's was, before 2026-12-06).
if "$paraxis" validate --measured "$work/small-cnn h=2.json" --trace "$work/small-cnn h=2.trace.json" --cluster local \
     --json >"$work/layers.json" 2>"$work/layers.err" &&
   /usr/bin/python3 - "$work/layers.json" "$work/small-cnn h=2.json" >"$work/layers.check" 2>&1 <<'PY'
import json, sys
layers = json.load(open(sys.argv[1]))["layers"]
t = json.load(open(sys.argv[2]))["time"]
m = {l["layer"]: l["measured"] for l in layers}
comm = sum(v["communication_s"] for v in m.values())
backward = sum(v["backward_s"] or 0 for v in m.values())
largest = max(v["backward_s"] or 0 for v in m.values())
pass_ = t["backward_data"] + t["backward_weight"]
convs = [k for k in m if k.endswith(".conv")]
ok = (len(convs) == 4 and all(m[k]["forward_calls"] > 0 and m[k]["communication_s"] > 0 for k in convs)
      and 0 < comm <= 1.5 * (t["halo"] + t["layer_collectives"] + t["shuffle"]) and 0 < largest < 0.6 * pass_)
print(f"layers' communication {comm:.3g} s, backward {backward:.3g} s (the largest {largest:.3g}); the run's halo + "
      f"collectives + shuffles {t['halo'] + t['layer_collectives'] + t['shuffle']:.3g} s, backward {pass_:.3g} s")
sys.exit(0 if ok else 1)
PY
then pass; else fail "small-cnn h=2: validate --trace: $(tail -3 "$work/layers.err" "$work/layers.check" 2>/dev/null)"; fi
sed "s/^/small-cnn h=2 validate --trace: /" "$work/layers.check"

# A pipeline's stages time each micro-batch's layers backward too: every layer with weights has
# as many backward calls as forward ones, and the busiest stage's layers' medians, one per
# micro-batch, add up to most of its measured backward (none of it outside).
if "${mpirun[@]}" -np 2 "$paraxis" train --model lenet --grid pipeline=2 --micro-batches 4 --iterations 10 --threads 1 \
     --quiet --trace "$work/pipeline.trace.json" --report "$work/pipeline.json" >/dev/null 2>"$work/pipeline.err" &&
   "$paraxis" validate --measured "$work/pipeline.json" --trace "$work/pipeline.trace.json" --cluster local --json \
     >"$work/pipeline.layers.json" 2>>"$work/pipeline.err" &&
   /usr/bin/python3 - "$work/pipeline.layers.json" "$work/pipeline.json" >"$work/pipeline.check" 2>&1 <<'PY'
import json, sys
layers = json.load(open(sys.argv[1]))["layers"]
r = json.load(open(sys.argv[2]))
weighted = [l for l in layers if l["layer"].startswith(("conv", "fc"))]
calls = [(l["layer"], l["measured"]["forward_calls"], l["measured"]["backward_calls"]) for l in weighted]
mine = [l["measured"]["backward_s"] or 0 for l in layers if l["rank"] == r["breakdown_rank"]]
summed = sum(mine) * r["strategy"]["micro_batches"]
pass_ = r["time"]["backward_data"] + r["time"]["backward_weight"]
ok = len(weighted) == 4 and all(f > 0 and b == f for _, f, b in calls) and 0.5 * pass_ <= summed <= 1.05 * pass_
print(f"calls (forward, backward) {calls}; rank {r['breakdown_rank']}'s layers backward {summed * 1e3:.3f} ms a step, "
      f"its backward {pass_ * 1e3:.3f} ms")
sys.exit(0 if ok else 1)
PY
then pass; else fail "lenet pipeline=2: validate --trace: $(tail -3 "$work/pipeline.err" "$work/pipeline.check" 2>/dev/null)"; fi
sed "s/^/lenet pipeline=2 validate --trace: /" "$work/pipeline.check"

# The report records the slice its communication threads ran with (own_thread_slice, lib.sh).
if /usr/bin/python3 - "$work/lenet data=2, priority.json" "$(own_thread_slice)" <<'PY'
import json, os, sys
got = json.load(open(sys.argv[1]))["machine"].get("comm_thread_slice_s")
print(f"machine.comm_thread_slice_s {got} (kernel {os.uname().release})")
sys.exit(0 if got == float(sys.argv[2]) else 1)
PY
then pass; else fail "lenet data=2: machine.comm_thread_slice_s is not the slice its threads ran with"; fi

# A pipeline's stages compute different layers: the report's breakdown is the busiest stage's
# (breakdown_rank, the largest of rank_busy_s, whose figure its time's passes add up to), a data
# grid's rank 0's.
busiest() {  # busiest NAME EXPECTED ARGS...: EXPECTED "argmax" or a rank
  local name=$1 expected=$2; shift 2
  if "${mpirun[@]}" -np 2 "$paraxis" train --iterations 10 --threads 1 --quiet --report "$work/$name.json" "$@" \
       >/dev/null 2>"$work/$name.err" &&
     /usr/bin/python3 - "$work/$name.json" "$expected" >"$work/$name.check" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
busy, rank, t = r["rank_busy_s"], r["breakdown_rank"], r["time"]
mine = sum(t[k] for k in ("forward", "backward_data", "backward_weight", "halo", "layer_collectives", "shuffle"))
want = max(range(len(busy)), key=busy.__getitem__) if sys.argv[2] == "argmax" else int(sys.argv[2])
ok = len(busy) == 2 and min(busy) > 0 and rank == want and abs(mine - busy[rank]) <= 1e-9 * busy[rank]
print(f"rank_busy_s {busy}, breakdown_rank {rank} (expected {want}), its passes {mine}")
sys.exit(0 if ok else 1)
PY
  then
    pass
  else
    fail "$name: $(tail -3 "$work/$name.err" "$work/$name.check" 2>/dev/null)"
  fi
  sed "s/^/$name: /" "$work/$name.check"
}
# tests/data/tail_heavy.yaml's second stage does 128x its first's work: the breakdown is rank 1's.
busiest "tail_heavy pipeline=2" 1 --model "$(dirname "$0")/../data/tail_heavy.yaml" --grid pipeline=2 --micro-batches 4
busiest "lenet pipeline=2" argmax --model lenet --grid pipeline=2 --micro-batches 4
busiest "lenet data=2" 0 --model lenet
finish
