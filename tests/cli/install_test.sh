#!/usr/bin/env bash
# Install and package (issue #17): `cmake --install` into a fresh prefix, and the Debian package
# CPack builds unpacked into a scratch root (a machine's / without paraxis), each running
# `paraxis plan` from where it was put, with the docs and the model and cluster files beside it.
# Usage: install_test.sh BUILD_DIR
set -u
build=${1:?usage: install_test.sh BUILD_DIR}
work=$(mktemp -d /tmp/paraxis-install.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
passed=0
check() {  # check DESCRIPTION COMMAND...: the command succeeds
  local what=$1; shift
  if "$@" >"$work/out" 2>&1; then passed=$((passed + 1)); else echo "FAIL: $what: $(tail -3 "$work/out")"; failures=$((failures + 1)); fi
}
plans() {  # plans ROOT: the installed paraxis ranks strategies, and reads an installed model and cluster
  "$1/bin/paraxis" plan --gpus 64 --top 1 --json |
    /usr/bin/python3 -c 'import json,sys; assert json.load(sys.stdin)["estimates"][0]["strategy"]["name"] == "data"' &&
    "$1/bin/paraxis" plan --model "$1/share/paraxis/models/inception-mini.yaml" \
      --cluster "$1/share/paraxis/clusters/netns-2x2-1gbit.yaml" --gpus 4 --top 1 | grep -q "inception-mini on netns-2x2"
}

check "cmake --install" cmake --install "$build" --prefix "$work/prefix"
check "installed docs" test -s "$work/prefix/share/doc/paraxis/README.md" -a -s "$work/prefix/share/doc/paraxis/json-output.md"
check "paraxis plan from the prefix" plans "$work/prefix"
check "the installed planner hands config to libexec/paraxis/paraxis-run" \
  bash -c "'$work/prefix/bin/paraxis' config | grep -q 'LibTorch [0-9]'"

check "cpack -G DEB" cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/package"
deb=$(ls "$work"/package/paraxis_*_amd64.deb 2>/dev/null | head -1)
check "the package's Depends name LibTorch and Open MPI" \
  bash -c "dpkg-deb -f '$deb' Depends | grep -q libtorch && dpkg-deb -f '$deb' Depends | grep -q libopenmpi"
check "dpkg-deb -x into a scratch root" dpkg-deb -x "$deb" "$work/root"
check "paraxis plan from the unpacked package" plans "$work/root/usr"
check "the package's paraxis-run is in libexec" test -x "$work/root/usr/libexec/paraxis/paraxis-run"

echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
