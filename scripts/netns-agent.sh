#!/usr/bin/env bash
# OpenMPI's remote-launch agent for netns-hosts.sh: "netns-agent.sh HOST COMMAND..." runs
# COMMAND inside the namespace of HOST (10.77.0.K+1 -> pxK) under that host's own hostname,
# the way ssh would run it on a real host.
set -euo pipefail
host=$1
shift
case "$host" in
  10.77.0.*) index=$(( ${host##*.} - 1 )); name="px$index" ;;
  px*) name=$host ;;
  *) echo "netns-agent: unknown host '$host'" >&2; exit 1 ;;
esac
exec ip netns exec "$name" unshare --uts sh -c "hostname $name; $*"
