#!/usr/bin/env bash
# paraxis models: model files and zoo names, errors and listings.
source "$(dirname "$0")/lib.sh" "$@"

expect_error "bad_syntax.yaml:3:1: malformed YAML" models show "$data/bad_syntax.yaml"
expect_error "unknown_kind.yaml:5:.*unknown layer kind 'rectifier'" models show "$data/unknown_kind.yaml"
expect_error "shape_mismatch.yaml:6:.*layer 'join' \(add\): input shapes do not fit: 'a' gives 16x32x32, 'b' gives 16x16x16" \
  models show "$data/shape_mismatch.yaml"
expect_error "unknown key 'strides'" models show "$data/unknown_key.yaml"
expect_error "unknown model 'resnet51': the zoo has" models show resnet51
expect_error "nope.yaml: cannot open the file" models show nope.yaml
expect_error "--input: expected spatial extents" models show resnet50 --input 22a
expect_error "takes 3 spatial dimensions, 2 were given" models show cosmoflow --input 64x64
expect_error "input 3x16x16 is too small|too small" models show alexnet --input 16
expect_error "apply to zoo models" models show "$data/lenet.yaml" --input 32
expect_error "batch" models show resnet50 --batch 0
expect_error "--frobnicate" models show resnet50 --frobnicate
expect_ok "25,557,032" models show resnet50
expect_ok "total" models show "$data/residual.yaml"
expect_ok "inception-v3 .* 27,161,264" models
expect_ok "Usage" models show --help
expect_json models show resnet50 --json
expect_json models show "$data/residual.yaml" --json --batch 8
expect_json models --json
# Counts beyond 2^53 are refused, not printed as negative sizes.
expect_error "model 'resnet50': input 3x2000000000x2000000000: .* exceeds 2\^53" models show resnet50 --input 2000000000x2000000000
finish
