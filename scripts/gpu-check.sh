#!/usr/bin/env bash
# The GPU check (issue #18), one script for a machine with a CUDA PyTorch and no MPI (the
# device the `device` tool lends: one H200, PyTorch 2.11 + CUDA 13, nvcc, CMake, ninja):
#   scripts/gpu-check.sh OUT_DIR [--build-only]
# builds paraxis against that PyTorch's LibTorch (no MPI: the self backend), runs the GPU tests
# (per-layer outputs on the GPU against the CPU), times the layers on the GPU and fits the GPU's
# preset (h100 on an H100, else h200) to them (bench compute --device cuda), trains ResNet-50 and CosmoFlow on the
# GPU, runs PyTorch eager on the same models and batches, and validates the runs against the
# fitted preset. Everything it prints and writes lands under OUT_DIR; summary.txt holds the
# figures. Libraries the machine lacks (yaml-cpp, fmt, CLI11, nlohmann-json, GoogleTest) come
# from .deps/*.deb, Debian's packages downloaded beside the checkout (`apt-get download`).
set -uo pipefail
out=${1:?usage: scripts/gpu-check.sh OUT_DIR [--build-only]}
mode=${2:-all}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
summary="$out/summary.txt"
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
stage() { echo "== $* ($(date +%T))"; }

stage environment
{
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'
  g++ --version | head -1; cmake --version | head -1; command -v ninja nvcc; nproc
  grep PRETTY /etc/os-release
} > "$out/environment.txt" 2>&1
cat "$out/environment.txt"
# The preset of the GPU at hand: its device is what the fit starts from and the runs are held to.
preset=h200
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | grep -q H100 && preset=h100
say "preset: $preset"

stage "dependencies from .deps"
deps=/tmp/paraxis-deps
mkdir -p "$deps"
for f in .deps/*.deb; do
  [ -e "$f" ] || continue
  case "$f" in *zlib1g-dev*) [ -e /usr/include/zlib.h ] && continue ;; esac
  dpkg -x "$f" "$deps"
done
# Debian's libz.so points at its own runtime: use this machine's.
if [ -e "$deps/usr/include/zlib.h" ]; then
  for z in /usr/lib/x86_64-linux-gnu/libz.so.1 /lib/x86_64-linux-gnu/libz.so.1; do
    [ -e "$z" ] && ln -sf "$z" "$deps/usr/lib/x86_64-linux-gnu/libz.so" && break
  done
fi
export LD_LIBRARY_PATH="$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

stage configure
torch_dir=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
generator=(-G Ninja)
command -v ninja >/dev/null || generator=()
build="build-gpu"
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DPARAXIS_TORCH_DIR="$torch_dir" \
  -DPARAXIS_WITH_MPI=OFF -DPARAXIS_WITH_PYTHON=OFF -DPARAXIS_GPU_TESTS=ON -DCMAKE_PREFIX_PATH="$deps/usr" \
  > "$out/configure.log" 2>&1 || { tail -40 "$out/configure.log"; say "configure: FAILED"; exit 1; }
grep -E 'paraxis:|CUDA|cuDNN|Torch' "$out/configure.log" | head -20

stage build
targets=(paraxis gpu_test)
[ "$mode" = --build-only ] && targets=(paraxis)
if ! cmake --build "$build" -j "$(nproc)" --target "${targets[@]}" -- -k 0 > "$out/build.log" 2>&1; then
  grep -E 'error|Error' "$out/build.log" | head -60
  say "build: FAILED ($(grep -c 'error:' "$out/build.log") errors; build.log)"
  exit 1
fi
say "build: ok"
[ "$mode" = --build-only ] && exit 0

bin="$build/paraxis"
stage "GPU tests: every layer's output and training steps against the CPU"
if (cd "$build" && timeout 200 ctest -L gpu -V) > "$out/gpu_test.log" 2>&1; then
  say "gpu tests: passed"
else
  say "gpu tests: FAILED (gpu_test.log)"
fi
grep -E 'largest relative|Failure|Expected|Which is' "$out/gpu_test.log" | head -20 | tee -a "$summary"

stage "bench compute --device cuda: the $preset preset's device fitted to the layers"
bench=(bench compute --device cuda --cluster "$preset" --model "resnet50@224,cosmoflow@128" --batch "16,32")
# Every call's time first (kept even if the fit cannot be written), then the fit into a file.
timeout 150 "$bin" "${bench[@]}" --per-call > "$out/bench_compute.txt" 2>&1 || say "bench compute: FAILED"
timeout 150 "$bin" "${bench[@]}" --out "$out/$preset-fitted.yaml" > "$out/bench_fit.txt" 2>&1 || say "bench compute --out: FAILED"
grep -A8 '^model ' "$out/bench_fit.txt" | head -12 | tee -a "$summary"
tail -2 "$out/bench_fit.txt"

# name model input batch samples: train on the GPU, then the eager peer on the same.
runs=()
run_pair() {
  local name=$1 model=$2 input=$3 batch=$4 samples=$5
  stage "train $name on cuda, then PyTorch eager"
  timeout 120 "$bin" train --device cuda --model "$model" --input "$input" --batch-per-rank "$batch" --iterations 23 \
    --synthetic-samples "$samples" --quiet --report "$out/train_$name.json" > "$out/train_$name.txt" 2>&1 ||
    { say "train $name: FAILED"; tail -3 "$out/train_$name.txt"; return; }
  runs+=("$out/train_$name.json")
  timeout 120 python3 scripts/eager_peer.py --model "$model" --input "$input" --batch "$batch" --iterations 20 \
    --samples "$samples" > "$out/eager_$name.json" 2> "$out/eager_$name.err" || say "eager $name: FAILED"
  python3 - "$out/train_$name.json" "$out/eager_$name.json" "$name" <<'PY' | tee -a "$summary"
import json, sys
ours = json.load(open(sys.argv[1]))
peer = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
print(f"{sys.argv[3]}: paraxis {ours['samples_per_second']:.1f} samples/s, PyTorch eager {peer['samples_per_second']:.1f} "
      f"(ratio {ours['samples_per_second'] / peer['samples_per_second']:.3f}; {peer['parameters']} parameters in the peer)")
PY
}
run_pair resnet50_b64 resnet50 224 64 448
run_pair resnet50_b32 resnet50 224 32 448
run_pair cosmoflow128_b16 cosmoflow 128 16 64

stage "validate the GPU runs against the fitted $preset and the preset"
for cluster in "$out/$preset-fitted.yaml" "$preset"; do
  tag=$(basename "$cluster" .yaml)
  "$bin" validate --measured "${runs[@]}" --cluster "$cluster" > "$out/validate_$tag.txt" 2>&1 || say "validate $tag: FAILED"
  "$bin" validate --measured "${runs[@]}" --cluster "$cluster" --json > "$out/validate_$tag.json" 2>/dev/null
  echo "validate against $tag:" | tee -a "$summary"
  grep -E 'train_|error|mean' "$out/validate_$tag.txt" | head -12 | tee -a "$summary"
done
stage "done"
