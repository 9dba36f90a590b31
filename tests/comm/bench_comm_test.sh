#!/usr/bin/env bash
# paraxis bench comm in nccl-tests' shape (issue #17), at 3 ranks: every operation out of place
# and in place (alltoall has no in-place form: n/a) with #wrong 0 for sum and max, broadcast from
# a root other than 0, the closing "Out of bounds values" and "Avg bus bandwidth" lines, and the
# JSON's avg_busbw_bytes_per_s equal to the mean of its rows' bus bandwidths.
# Usage: bench_comm_test.sh PARAXIS MPIRUN [MPIRUN FLAGS...]
set -u
paraxis=${1:?usage: bench_comm_test.sh PARAXIS MPIRUN [MPIRUN FLAGS...]}
shift
out=$(mktemp -d /tmp/paraxis-bench-comm.XXXXXX)
trap 'rm -rf "$out"' EXIT
failures=0
passed=0
check() {  # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then passed=$((passed + 1)); else echo "FAIL: $what"; failures=$((failures + 1)); fi
}
ops=allreduce,allgather,reduce_scatter,broadcast,alltoall
common=(bench comm --op "$ops" --min-bytes 4 --max-bytes 64KiB --step-factor 128 --trials 1 --iterations 3 --root 2)
for redop in sum max; do
  check "bench comm --redop $redop runs (a wrong element exits non-zero)" \
    "$@" -np 3 "$paraxis" "${common[@]}" --redop "$redop" >"$out/$redop.txt" 2>"$out/$redop.err"
  [ -s "$out/$redop.err" ] && head -3 "$out/$redop.err"
done
table=$out/sum.txt
check "the header names both ways and the type, redop and root columns" \
  grep -qE "out-of-place +in-place" "$table"
check "the column header" grep -qE "^# operation +algorithm +size +count +type +redop +root +time +algbw +busbw +#wrong +time" "$table"
check "the closing lines" bash -c "grep -q '^# Out of bounds values : 0 OK' '$table' && grep -qE '^# Avg bus bandwidth +: [0-9.]+ GB/s' '$table'"
check "alltoall has no in-place figures" grep -qE "^alltoall +pairwise .* n/a" "$table"
check "broadcast from root 2" grep -qE "^broadcast +binomial +.* float +none +2 " "$table"
check "max shows in the redop column" grep -qE "^allreduce +ring .* float +max +-1 " "$out/max.txt"

check "bench comm --json" bash -c "$* -np 3 '$paraxis' ${common[*]} --json >'$out/run.json'"
check "the JSON's figures" /usr/bin/python3 - "$out/run.json" <<'PY'
import json, math, sys
doc = json.load(open(sys.argv[1]))
rows = doc["rows"]
ops = {r["operation"] for r in rows}
assert ops == {"allreduce", "allgather", "reduce_scatter", "broadcast", "alltoall"}, ops
values = []
for r in rows:
    values.append(r["busbw_bytes_per_s"])
    assert r["wrong"] == 0, r
    if r["operation"] == "alltoall":
        assert r["in_place"] is None, r
    else:
        assert r["in_place"]["wrong"] == 0, r
        values.append(r["in_place"]["busbw_bytes_per_s"])
    assert r["redop"] == ("sum" if r["operation"] in ("allreduce", "reduce_scatter") else "none"), r
    assert r["root"] == (2 if r["operation"] == "broadcast" else -1), r
mean = sum(values) / len(values)
assert math.isclose(doc["avg_busbw_bytes_per_s"], mean, rel_tol=1e-9), (doc["avg_busbw_bytes_per_s"], mean)
assert doc["wrong"] == 0
PY
echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
