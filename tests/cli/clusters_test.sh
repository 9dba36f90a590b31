#!/usr/bin/env bash
# paraxis clusters and config: presets, cluster files, knobs.
source "$(dirname "$0")/lib.sh" "$@"

expect_error "unknown cluster 'frontier': the presets are abci" clusters show frontier
expect_error "bad_cluster.yaml:6:21: device.memory_bandwidth" clusters show "$data/bad_cluster.yaml"
expect_error "subcommand" 
PARAXIS_THREADS=many expect_error "environment variable PARAXIS_THREADS: expected an integer" config
PARAXIS_THREADS=99999999999 expect_error "environment variable PARAXIS_THREADS: expected a value in \[0, 1024\]" config
PARAXIS_COMM_DEADLINE=1e-6 expect_error "PARAXIS_COMM_DEADLINE: expected a value in \[0.01, 86400\] seconds" config
PARAXIS_JSON_INDENT=100000000 expect_error "PARAXIS_JSON_INDENT: expected a value in \[-1, 16\]" models --json
expect_ok "abci .* 4,352" clusters
expect_ok "spine .* 3:1" clusters show abci
expect_ok "leaf +256 +2 us +50 GB/s +2e-11 +8 +400 GB/s" clusters show h200-pod
expect_ok "json_indent" config
# The gradient path's knobs (Horovod's environment variables): a string knob names its choices,
# the environment sets the default, the command line overrides it.
PARAXIS_WIRE=fp64 expect_error "PARAXIS_WIRE: expected one of fp32, fp16, bf16, chunk-sparse, found 'fp64'" config
PARAXIS_FUSION_BYTES=8MiB expect_ok "fusion_bytes +bytes +8MiB +PARAXIS_FUSION_BYTES" config
wire_of() {  # wire_of ARGS...: the wire train --json ran with
  "$paraxis" train --model lenet --iterations 1 --batch-per-rank 8 --synthetic-samples 64 --threads 1 --json "$@" |
    /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["strategy"]["comm"]["wire"])'
}
if [ "$(PARAXIS_WIRE=bf16 wire_of)" = bf16 ] && [ "$(PARAXIS_WIRE=bf16 wire_of --wire fp32)" = fp32 ] &&
   [ "$(wire_of)" = fp32 ]; then
  passed=$((passed + 1))
else
  echo "FAIL: PARAXIS_WIRE does not set train's default wire, or --wire does not override it"; failures=$((failures + 1))
fi
expect_json clusters show summit --json
expect_json config --json
expect_json clusters --json
# A calibrated device's kernel shapes: printed and in the JSON.
shaped=$(mktemp /tmp/paraxis-shaped.XXXXXX.yaml)
sed 's/^device:$/device:\n  kernels:\n    conv2d: {half_rate_rows: 16, strided_share: 0.8, native_efficiency: [[1e6, 0.25], [1e8, 0.5]]}/' \
  "$data/two_hosts.yaml" >"$shaped"
expect_ok "at half their curve's rate over rows .*: conv2d 16, strided calls at 80 %" clusters show "$shaped"
expect_ok "conv2d's native calls forward \(LibTorch's own kernel\):  1 MFLOP 25%  100 MFLOP 50%" clusters show "$shaped"
if [ "$("$paraxis" clusters show "$shaped" --json | /usr/bin/python3 -c \
      'import json,sys; k=json.load(sys.stdin)["device"]["kernels"]["conv2d"]; print(k["strided_share"], k["native_efficiency"][1]["efficiency"])')" = "0.8 0.5" ]; then
  passed=$((passed + 1))
else
  echo "FAIL: clusters show --json: device.kernels.conv2d's strided_share and native_efficiency are not the file's 0.8 and 0.5"
  failures=$((failures + 1))
fi
rm -f "$shaped"
# A bandwidth of 0 would make every time infinite: refused, naming the level.
zero=$(mktemp /tmp/paraxis-zero-bandwidth.XXXXXX.yaml)
sed 's/bandwidth: 1 Gbit\/s/bandwidth: 0/' "$data/two_hosts.yaml" >"$zero"
expect_error "network\[1\] \(veth\): bandwidth must be at least 1 KB/s and finite" plan --cluster "$zero" --model lenet --gpus 2
rm -f "$zero"
finish
