#!/usr/bin/env bash
# Fails if alphabeta/, graph/, hw/, cost/, plan/ or calib/ (outside calib/torch/) include MPI or torch headers, or if mpi.h appears
# outside comm/mpi/ (ARCHITECTURE.md, "hard rules"). Prints each offending line.
set -u
src=${1:?usage: check_includes.sh SRC_DIR}
status=0
heavy='#include[[:space:]]*[<"](mpi\.h|torch/|ATen/|c10/|caffe2/)'
for module in alphabeta graph hw cost plan calib; do
  if hits=$(grep -rnE --exclude-dir=torch "$heavy" "$src/$module" 2>/dev/null); then
    echo "FAIL: $module includes MPI or torch headers:"; echo "$hits"; status=1
  fi
done
if hits=$(grep -rnE '#include[[:space:]]*[<"]mpi\.h' "$src" | grep -v "^$src/comm/mpi/"); then
  echo "FAIL: mpi.h included outside comm/mpi/:"; echo "$hits"; status=1
fi
checked=$(find "$src/alphabeta" "$src/graph" "$src/hw" "$src/cost" "$src/plan" "$src/calib" -path "$src/calib/torch" -prune -o -name '*.[ch]pp' -print | wc -l)
[ "$checked" -gt 0 ] || { echo "FAIL: no sources found under $src"; exit 1; }
[ $status -eq 0 ] && echo "ok: $checked files of alphabeta/graph/hw/cost/plan/calib include neither MPI nor torch"
exit $status
