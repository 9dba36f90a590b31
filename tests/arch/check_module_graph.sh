#!/usr/bin/env bash
# Holds the module graph that the CMake targets declare (build/module_graph.txt, written at
# configure time) against ARCHITECTURE.md's table: every edge between paraxis modules must be
# one the table allows. comm, for example, may use core and the alphabeta formulas only, never
# cost, graph or hw. Prints each offending edge.
set -u
graph=${1:?usage: check_module_graph.sh MODULE_GRAPH_FILE}
[ -s "$graph" ] || { echo "FAIL: $graph is missing or empty"; exit 1; }
declare -A allowed=(
  [core]=""
  [alphabeta]=""
  [graph]="core"
  [hw]="core"
  [cost]="alphabeta graph hw core"
  [plan]="cost graph hw core"
  [comm]="alphabeta core"
  [reduce]="comm core"
  [parallel]="comm graph plan core"
  [train]="parallel reduce comm graph plan core"
  [calib]="plan cost graph hw core"
  [calib_torch]="calib train comm hw plan graph core"
  [cli]="calib plan cost graph hw core"
  [cli_run]="cli calib_torch calib train parallel reduce comm plan cost graph hw core alphabeta"
)
status=0
modules=0
while read -r user used; do
  [ -n "$user" ] || continue
  if [ -z "${allowed[$user]+x}" ]; then
    echo "FAIL: module '$user' is not in the table of this test (add it with the edges ARCHITECTURE.md allows)"
    status=1
    continue
  fi
  if [ -z "$used" ]; then modules=$((modules + 1)); continue; fi
  case " ${allowed[$user]} " in
    *" $used "*) ;;
    *) echo "FAIL: $user depends on $used; ARCHITECTURE.md allows $user -> {${allowed[$user]}}"; status=1 ;;
  esac
done <"$graph"
[ "$modules" -ge 10 ] || { echo "FAIL: only $modules modules in $graph"; exit 1; }
[ $status -eq 0 ] && echo "ok: the $modules modules' target dependencies follow ARCHITECTURE.md"
exit $status
