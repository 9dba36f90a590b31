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
expect_json clusters show summit --json
expect_json config --json
expect_json clusters --json
# A bandwidth of 0 would make every time infinite: refused, naming the level.
zero=$(mktemp /tmp/paraxis-zero-bandwidth.XXXXXX.yaml)
sed 's/bandwidth: 1 Gbit\/s/bandwidth: 0/' "$data/two_hosts.yaml" >"$zero"
expect_error "network\[1\] \(veth\): bandwidth must be at least 1 KB/s and finite" plan --cluster "$zero" --model lenet --gpus 2
rm -f "$zero"
finish
