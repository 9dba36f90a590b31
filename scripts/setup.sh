#!/usr/bin/env bash
# Installs the Debian packages paraxis needs, only those that are missing.
# Used by `make demo` and `make test`; safe to run repeatedly (a no-op when all are present).
set -euo pipefail

packages=(
  cmake ninja-build g++ make ccache pkg-config
  libtorch-dev libopenblas0-openmp zlib1g-dev
  libopenmpi-dev openmpi-bin
  nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  dataset-fashion-mnist
  python3-torch python3-torchvision
  iproute2
  libglpk-dev
  dpkg-dev fakeroot
  pybind11-dev python3-dev
  chromium python3-pil
  libonnx-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${#missing[@]} missing Debian packages: ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 2; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
