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
expect_ok "json_indent" config
expect_json clusters show summit --json
expect_json config --json
expect_json clusters --json
finish
