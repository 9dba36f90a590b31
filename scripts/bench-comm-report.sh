#!/usr/bin/env bash
# Runs `paraxis bench comm` several times (alternating nothing but the runs themselves: each
# run measures every algorithm, MPI's own included, size by size) and prints per size the
# median bus bandwidth of each algorithm and the ratio of paraxis's best to MPI's.
#
#   scripts/bench-comm-report.sh RUNS LAUNCHER... -- [bench comm options]
# e.g.
#   scripts/bench-comm-report.sh 3 mpirun --allow-run-as-root -np 2 -- --min-bytes 64KiB
#   scripts/bench-comm-report.sh 3 scripts/netns-hosts.sh with 2 1gbit 1 -- --min-bytes 16MiB --max-bytes 16MiB
set -euo pipefail
runs=${1:?usage: bench-comm-report.sh RUNS LAUNCHER... -- [bench options]}
shift
launcher=()
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do launcher+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d /tmp/paraxis-bench.XXXXXX)
for ((i = 1; i <= runs; i++)); do
  echo "run $i of $runs" >&2
  # The launcher's own options end where the program starts: a "--" separates them for
  # netns-hosts.sh, plain mpirun takes the program directly.
  if [ "$(basename "${launcher[0]}")" = "netns-hosts.sh" ]; then
    "${launcher[@]}" -- "$root/build/paraxis" bench comm --json "$@" | sed -n '/^{/,$p' >"$out/run$i.json"
  else
    "${launcher[@]}" "$root/build/paraxis" bench comm --json "$@" | sed -n '/^{/,$p' >"$out/run$i.json"
  fi
done
/usr/bin/python3 - "$out" <<'PY'
import glob, json, statistics, sys
runs = [json.load(open(f)) for f in sorted(glob.glob(sys.argv[1] + "/run*.json"))]
table = {}
for run in runs:
    for row in run["rows"]:
        table.setdefault((row["operation"], row["bytes"]), {}).setdefault(row["algorithm"], []).append(row["busbw_bytes_per_s"])
print(f"{len(runs)} runs, {runs[0]['ranks']} ranks on {runs[0]['hosts']} host(s); median bus bandwidth in GB/s")
for (op, size), algos in sorted(table.items()):
    med = {a: statistics.median(v) / 1e9 for a, v in algos.items()}
    ours = {a: v for a, v in med.items() if a != "mpi"}
    best = max(ours, key=ours.get) if ours else None
    line = f"{op:<14} {size:>11} B  " + "  ".join(f"{a}={v:.3f}" for a, v in med.items())
    if best and "mpi" in med:
        line += f"  | best {best} / mpi = {ours[best] / med['mpi']:.2f}x"
    print(line)
PY
rm -rf "$out"
