#!/usr/bin/env bash
# A hostfile launch across two hosts (issue #17; docs/launching.md): two network-namespace hosts
# (scripts/netns-hosts.sh, 1 Gbit/s) and a hostfile of two lines with 2 slots each, launched the
# way docs/launching.md says to launch on real hosts; the one difference is OpenMPI's remote
# agent (netns-agent.sh in place of ssh). Checks: the job ran 4 ranks on 2 hosts x 2 (train's
# report, machine.hosts and ranks_per_host, from the ranks' own host names; OpenMPI starts a
# daemon per host, so the ranks of different hosts talk over TCP across the shaped link), and
# the weights equal those of the same 4 ranks on one host within 1e-5 (only the order of the
# sums may differ).
# Usage: hostfile_test.sh PARAXIS MPIRUN [MPIRUN FLAGS...]   (needs root for ip netns)
source "$(dirname "$0")/lib.sh" "$@"
root=$(cd "$(dirname "$0")/../.." && pwd)
netns=$root/scripts/netns-hosts.sh
trap 'bash "$netns" down 2 >/dev/null 2>&1; rm -rf "$work"' EXIT

cat >"$work/hosts" <<'HOSTS'
10.77.0.1 slots=2
10.77.0.2 slots=2
HOSTS
run=(train --model lenet --iterations 5 --synthetic-samples 64 --batch-per-rank 8 --threads 1 --quiet
     --no-lr-scaling --lr 0.01)

bash "$netns" up 2 1gbit || { fail "could not create the namespace hosts (root and iproute2 needed)"; finish; }
# docs/launching.md's command line; --mca plm_rsh_agent stands in for ssh.
if ip netns exec px0 unshare --uts sh -c 'hostname px0; exec "$@"' sh \
     mpirun --allow-run-as-root --hostfile "$work/hosts" -np 4 --map-by slot --bind-to none \
     --mca plm_rsh_agent "$root/scripts/netns-agent.sh" \
     --mca btl self,vader,tcp --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 \
     --mca btl_tcp_eager_limit 524288 --mca btl_tcp_max_send_size 524288 \
     "$paraxis" "${run[@]}" --report "$work/hosts.json" --weights-out "$work/hosts.bin" >"$work/hosts.log" 2>&1; then
  pass
else
  fail "the hostfile launch: $(tail -3 "$work/hosts.log")"
  finish
fi
bash "$netns" down 2

if /usr/bin/python3 - "$work/hosts.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
m = r["machine"]
print(f"hostfile launch: {r['ranks']} ranks, hosts {m['hosts']}, {m['ranks_per_host']} per host, rank 0 on {m['host']}, "
      f"gradient allreduce {r['gradient_allreduce_algorithm']}")
sys.exit(0 if r["ranks"] == 4 and m["hosts"] == 2 and m["ranks_per_host"] == 2 and m["host"] == "px0" else 1)
PY
then pass; else fail "the report does not say 4 ranks on 2 hosts x 2 (rank 0 on px0)"; fi

if "${mpirun[@]}" -np 4 "$paraxis" "${run[@]}" --weights-out "$work/one.bin" >/dev/null; then
  got=$(difference "$work/one.bin" "$work/hosts.bin")
  echo "2 hosts x 2 against 1 host x 4: weights differ by $got of the largest (bound 1e-5)"
  if python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < 1e-5 else 1)" "$got"; then pass; else fail "weights"; fi
else
  fail "the one-host run"
fi
finish
