#!/usr/bin/env bash
# paraxis plan: the oracle's command line, errors, tables, --emit.
source "$(dirname "$0")/lib.sh" "$@"

expect_error "unknown strategy 'magic'" plan --strategies magic
expect_error "layer 'conv1' .conv.: 64 output channels cannot be split over 128 ranks" plan --strategies filter --gpus 128 --global-batch 128
expect_error "global batch 100 does not divide over 64 data-parallel groups" plan --strategies data --gpus 64 --global-batch 100
expect_error "--gpus 8192: cluster 'abci' has 4352 devices" plan --strategies data --gpus 8192
expect_error "--gpus 100000000: cluster 'abci' has 4352 devices" plan --gpus 100000000 --per-layer
expect_error "--gpus 8..1024: cluster 'local-4' has 4 devices \(try --gpus 1..4\)" plan --cluster "$data/local_4.yaml" --gpus 8..1024
expect_error "--gpus: expected a count" plan --gpus lots
expect_error "--epochs-at: expected BATCH=EPOCHS" plan --epochs-at 90
expect_error "needs --sample-seconds" plan --model-variant paradl
expect_error "device 'Tesla V100-SXM2-16GB' has no peak for data type 'fp8'" plan --dtype fp8
expect_ok "data .*data=64 .* 64 " plan --gpus 64 --strategies data,data+filter
expect_ok "explain: data" plan --gpus 64 --strategies data --explain
# The exposed gradient time's parts under it (validate --trace holds a run's waits against them).
for part in "the reductions, waited for" "the ranks' drift after it" "one wait a group beside them"; do
  expect_ok "^      $part +[0-9.]+ [mu]?s$" plan --model lenet --cluster local --grid data=2 --global-batch 32 --explain
done
# --explain-layers: the layers' table after the explanation; a split batch norm synchronises.
expect_ok "^per layer, ms on one rank" plan --model small-cnn --cluster local --grid h=2 --global-batch 16 --explain-layers
expect_ok "^block1\.bn +[0-9.]+ +[0-9.]+ +0\.0*[1-9]" plan --model small-cnn --cluster local --grid h=2 --global-batch 16 --explain-layers
expect_ok "n.*xd1xh.*xw" plan --model small-cnn --gpus 4 --global-batch 8 --per-layer
expect_ok "ParaDL's equations" plan --model-variant paradl --sample-seconds 0.0031195 --strategies data --gpus 64 --batch-per-gpu 64
expect_ok "data .*data=64 .* 4096 .* 68.07" plan --model-variant paradl --sample-seconds 0.0031195 --paradl-network "$data/paradl_resnet50.net" --strategies data --gpus 64 --batch-per-gpu 64
expect_error "lenet.yaml:1: expected name|x|w|y" plan --model-variant paradl --sample-seconds 0.0031195 --paradl-network "$data/lenet.yaml" --gpus 64
expect_json plan --gpus 8,16 --json
expect_ok "data\+filter\+spatial +data=8xfilter=2xh=2 +32 " plan --model cosmoflow --grid data=8xfilter=2xh=2
expect_error "grid 'data=8xq=2': cannot read 'q=2'" plan --grid data=8xq=2
expect_error "filter on 128 GPUs: layer 'conv1' .conv.: 64 output channels cannot be split over 128 ranks .filter=128." plan --grid filter=128 --global-batch 128
expect_error "--grid: give either --grid or --strategies" plan --grid data=8 --strategies data
# A model file that names its data set: an epoch of its 2,000 samples, 40 epochs at batch 64.
expect_ok "2,000 samples per epoch \(cosmology volumes\)" plan --model "$data/volumes.yaml" --cluster "$data/local_4.yaml" --gpus 2 --global-batch 64 --strategies data
if "$paraxis" plan --model "$data/volumes.yaml" --cluster "$data/local_4.yaml" --gpus 2 --global-batch 64 --strategies data --json |
   /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); e=d["estimates"][0]
assert d["dataset"] == {"name": "cosmology volumes", "samples": 2000}, d["dataset"]
assert e["epochs"] == 40 and e["iterations_per_epoch"] == 32, (e["epochs"], e["iterations_per_epoch"])'; then
  passed=$((passed + 1))
else
  echo "FAIL: the model file's data set did not price the epochs"; failures=$((failures + 1))
fi
printf 'name: x\ninput: {channels: 1, size: [8, 8]}\ndataset: {samples: 10, at_batch: 4}\nlayers:\n  - {kind: fc, outputs: 2}\n' >/tmp/paraxis-dataset.$$.yaml
expect_error "dataset.at_batch: at_batch anchors 'epochs': give both" plan --model /tmp/paraxis-dataset.$$.yaml
rm -f /tmp/paraxis-dataset.$$.yaml
emitted=$(mktemp /tmp/paraxis-emit.XXXXXX)
expect_ok "wrote strategy #1, data on grid data=64 to $emitted \(run it: paraxis train --plan $emitted\)" \
  plan --gpus 64 --top 1 --emit "$emitted" --csv
# The emitted strategy names the allreduce the oracle picked (train --plan runs it).
if /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["version"] == 1 and d["grid"]["data"] >= 1 and d["comm"]["allreduce"] in ("ring", "recursive_doubling", "rabenseifner", "hierarchical")' "$emitted"; then
  passed=$((passed + 1))
else
  echo "FAIL: --emit wrote no valid strategy JSON"; failures=$((failures + 1))
fi
rm -f "$emitted"
expect_error "--allreduce: expected auto, ring, recursive_doubling, rabenseifner or hierarchical, found 'tree'" plan --gpus 8 --allreduce tree
expect_ok "data" plan --gpus 64 --grid data=64 --allreduce hierarchical --cluster abci
# Pal et al.'s crossover (issue #16) on Summit's V100s, under the epochs plan names: DP x MP on
# 2 devices (a replica of 64 samples) trails DP on time to train up to 4,096 GPUs, leads at 8,192.
expect_ok "fastest to train: 64-4096 GPUs data; 8192 GPUs data\+placement \(the lead changes hands\)" plan \
  --model inception-v3 --cluster summit --strategies data,data+placement --batch-per-replica 64 --model-parallel 2 \
  --gpus 64..8192
expect_ok "epochs to the target accuracy: 90 epochs up to a global batch of 8,192, then x \(B / 8,192\)\^0.5" plan \
  --model inception-v3 --cluster summit --gpus 64
finish
