#!/usr/bin/env bash
# Simulated hosts on one machine: network namespaces px0..pxN-1 joined by veth links shaped
# with tc to a given rate, and an mpirun job spread across them. Used by tests and
# benchmarks that need real inter-host links (ENVIRONMENT.md, "Several hosts on one machine").
#
#   netns-hosts.sh up HOSTS RATE          create the hosts (RATE as tc takes it: 1gbit, 100mbit)
#   netns-hosts.sh down HOSTS             delete them
#   netns-hosts.sh mpirun HOSTS RANKS_PER_HOST -- PROGRAM [ARGS...]
#                                         run PROGRAM on HOSTS x RANKS_PER_HOST ranks
#   netns-hosts.sh with HOSTS RATE RANKS_PER_HOST -- PROGRAM [ARGS...]
#                                         up, mpirun, down (also on failure or interrupt)
#
# Host k is namespace pxk with address 10.77.0.(k+1)/24 and hostname pxk. Two hosts get one
# veth pair; three or more hang off a bridge in namespace pxbr. Traffic never leaves the
# namespaces this script creates. Needs root (ip netns), iproute2 and OpenMPI.
#
# TCP eager limit: the TCP BTL carries both directions' data and its rendezvous handshakes in
# one stream per pair, so above the eager limit (64 KiB by default) every message waits for
# a clear-to-send queued behind bulk data going the other way; a 2-rank ring allreduce then
# reaches ~50-70 % of a 1 Gbit/s link. paraxis pre-posts the receives of every segment
# (256 KiB by default), so raising the eager limit above the segment lets segments flow
# without handshakes: ~94 % of the link (measured; see the README).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
subnet=10.77.0
prefix=px

ns() { echo "${prefix}$1"; }

up() {
  local hosts=$1 rate=$2
  down "$hosts" 2>/dev/null || true
  for ((k = 0; k < hosts; k++)); do
    ip netns add "$(ns $k)"
    ip -n "$(ns $k)" link set lo up
  done
  if [ "$hosts" -eq 2 ]; then
    ip link add pxv0 netns "$(ns 0)" type veth peer name pxv1 netns "$(ns 1)"
  else
    ip netns add ${prefix}br
    ip -n ${prefix}br link add br0 type bridge
    ip -n ${prefix}br link set br0 up
    for ((k = 0; k < hosts; k++)); do
      ip link add "pxv$k" netns "$(ns $k)" type veth peer name "pxb$k" netns ${prefix}br
      ip -n ${prefix}br link set "pxb$k" master br0
      ip -n ${prefix}br link set "pxb$k" up
      ip netns exec ${prefix}br tc qdisc add dev "pxb$k" root tbf rate "$rate" burst 256kb latency 20ms
    done
  fi
  for ((k = 0; k < hosts; k++)); do
    ip -n "$(ns $k)" addr add "$subnet.$((k + 1))/24" dev "pxv$k"
    ip -n "$(ns $k)" link set "pxv$k" up
    ip netns exec "$(ns $k)" tc qdisc add dev "pxv$k" root tbf rate "$rate" burst 256kb latency 20ms
  done
}

down() {
  local hosts=$1
  for ((k = 0; k < hosts; k++)); do ip netns del "$(ns $k)" 2>/dev/null || true; done
  ip netns del ${prefix}br 2>/dev/null || true
}

run_mpi() {
  local hosts=$1 per=$2
  shift 2
  [ "${1:-}" = "--" ] && shift
  local hostfile
  hostfile=$(mktemp /tmp/paraxis-hosts.XXXXXX)
  for ((k = 0; k < hosts; k++)); do echo "$subnet.$((k + 1)) slots=$per" >>"$hostfile"; done
  local status=0
  # mpirun runs as host 0; OpenMPI starts the other hosts' daemons through netns-agent.sh.
  ip netns exec "$(ns 0)" unshare --uts sh -c "hostname $(ns 0); exec \"\$@\"" sh \
    mpirun --allow-run-as-root --oversubscribe --bind-to none --hostfile "$hostfile" \
    -np $((hosts * per)) --map-by slot \
    --mca plm_rsh_agent "$here/netns-agent.sh" \
    --mca btl self,vader,tcp --mca btl_tcp_if_include "$subnet.0/24" --mca oob_tcp_if_include "$subnet.0/24" \
    --mca mpi_yield_when_idle 1 \
    --mca btl_tcp_eager_limit 524288 --mca btl_tcp_max_send_size 524288 \
    "$@" || status=$?
  rm -f "$hostfile"
  return $status
}

case "${1:-}" in
  up) up "$2" "$3" ;;
  down) down "$2" ;;
  mpirun) shift; run_mpi "$@" ;;
  with)
    hosts=$2 rate=$3 per=$4
    shift 4
    trap 'down '"$hosts" EXIT INT TERM
    up "$hosts" "$rate"
    run_mpi "$hosts" "$per" "$@"
    ;;
  *) sed -n '2,20p' "$0"; exit 2 ;;
esac
