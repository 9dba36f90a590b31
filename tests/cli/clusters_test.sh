#!/usr/bin/env bash
# paraxis clusters and config: presets, cluster files, knobs.
source "$(dirname "$0")/lib.sh" "$@"

expect_error "unknown cluster 'frontier': the presets are abci" clusters show frontier
expect_error "bad_cluster.yaml:6:21: device.memory_bandwidth" clusters show "$data/bad_cluster.yaml"
expect_error "subcommand" 
PARAXIS_THREADS=many expect_error "environment variable PARAXIS_THREADS: expected an integer" config
expect_ok "abci .* 4,352" clusters
expect_ok "spine .* 3:1" clusters show abci
expect_ok "json_indent" config
expect_json clusters show summit --json
expect_json config --json
expect_json clusters --json
finish
