#!/usr/bin/env bash
# paraxis train runs filter, channel and pipeline grids and their products with data (and
# filter or channel with spatial axes), and trains what one rank trains: after 5 iterations the gathered weights (--weights-out)
# equal the reference run's within 1e-4 relative (float32) for LeNet (conv/FC pairs, flatten,
# dropout) and small-cnn (batch-norm on channel slices, global pooling), at 2 and 4 ranks;
# data=2 x filter=2 and data=2 x channel=2 equal data=2; h=2 x filter=2 equals one rank; a
# filter head (data=2 x h=2 x head=filter: convolutions on spatial blocks, the fully connected
# layers' filters split over the same ranks) equals data=2, h=2 x head=filter one rank. At 3
# ranks (11/11/10 channels) the partial sums add in another order than one rank's convolution
# (at 2 and 4 ranks the blocks of 16 channels keep it), LeNet's ReLUs and max-pool choices then
# switch within rounding and the difference grows ~100x a step: 1.8e-3 after 5 steps, so there
# the bound is 1e-2 (a wrong slice moves weights by O(1); the exact equivalence, 1e-9 in
# float64 at 2, 3 and 4 ranks, is tests/train/channel_net_test.cpp's).
# Pipelines: LeNet on 2 stages under 1F1B and GPipe with 4 micro-batches, on 3 stages with 1,
# and data=2 x pipeline=2 against data=2, within 1e-4. VGG-11 at 32^2 (10^8 weights) under
# filter=2 and pipeline=2 equals one rank within 1e-4 (VGG-16 and VGG-11 under channel=2 run the
# same code as these and small-cnn's channel=2; each took a minute, dropped to keep CI under 30
# minutes).
# Placements: inception-mini (scripts/models) with an auxiliary head on place=2 (ILP) equals one
# rank and data=2 x place=2 equals data=2 within 1e-4; ResNet-18 within its noise.
# Pipelines with spatial, filter or channel axes within the stages (pipeline=2 x h=2, x filter=2,
# x channel=2; small-cnn x h=2) equal one rank within 1e-4.
# A layer with fewer channels than the axis has ranks, more stages than layers, a filter head
# without a spatial axis, and a grid of another rank count end
# every rank with one line and exit 2. Both channel axes at once (filter=2 x channel=2: the
# weights of layers the rule gives both split over both) equal one rank.
source "$(dirname "$0")/lib.sh" "$@"

lenet=(--model lenet --batch-per-rank 8)
small=(--model small-cnn --input 32x32 --batch-per-rank 8)
equivalent "lenet filter=2" 1e-4 0 "${lenet[@]}" -- 2 "${lenet[@]}" --grid filter=2
equivalent "lenet channel=2" 1e-4 0 "${lenet[@]}" -- 2 "${lenet[@]}" --grid channel=2
equivalent "lenet filter=4" 1e-4 0 "${lenet[@]}" -- 4 "${lenet[@]}" --grid filter=4
equivalent "lenet filter=3 (uneven)" 1e-2 0 "${lenet[@]}" -- 3 "${lenet[@]}" --grid filter=3
equivalent "small-cnn filter=2" 1e-4 0 "${small[@]}" -- 2 "${small[@]}" --grid filter=2
equivalent "small-cnn channel=2" 1e-4 0 "${small[@]}" -- 2 "${small[@]}" --grid channel=2
equivalent "lenet data=2xfilter=2" 1e-4 2 "${lenet[@]}" -- 4 "${lenet[@]}" --grid data=2xfilter=2
equivalent "lenet data=2xchannel=2" 1e-4 2 "${lenet[@]}" -- 4 "${lenet[@]}" --grid data=2xchannel=2
equivalent "lenet h=2xfilter=2" 1e-4 0 "${lenet[@]}" -- 4 "${lenet[@]}" --grid filter=2xh=2
equivalent "lenet filter=2xchannel=2" 1e-4 0 "${lenet[@]}" -- 4 "${lenet[@]}" --grid filter=2xchannel=2
equivalent "small-cnn filter=2xchannel=2" 1e-4 0 "${small[@]}" -- 4 "${small[@]}" --grid filter=2xchannel=2
equivalent "lenet data=2xh=2xhead=filter" 1e-4 2 "${lenet[@]}" -- 4 "${lenet[@]}" --grid data=2xh=2xhead=filter
equivalent "small-cnn h=2xhead=filter" 1e-4 0 "${small[@]}" -- 2 "${small[@]}" --grid h=2xhead=filter
equivalent "lenet pipeline=2 1f1b m=4" 1e-4 0 "${lenet[@]}" -- 2 "${lenet[@]}" --grid pipeline=2 --micro-batches 4
equivalent "lenet pipeline=2 gpipe m=4" 1e-4 0 "${lenet[@]}" -- 2 "${lenet[@]}" --grid pipeline=2 --micro-batches 4 --schedule gpipe
equivalent "lenet pipeline=3 m=1" 1e-4 0 "${lenet[@]}" -- 3 "${lenet[@]}" --grid pipeline=3 --micro-batches 1
equivalent "lenet data=2xpipeline=2" 1e-4 2 "${lenet[@]}" -- 4 "${lenet[@]}" --grid data=2xpipeline=2 --micro-batches 2
# Axes within the stages: two stages of two ranks, tensors crossing place to place.
equivalent "lenet pipeline=2xh=2" 1e-4 0 "${lenet[@]}" -- 4 "${lenet[@]}" --grid pipeline=2xh=2 --micro-batches 2
equivalent "lenet pipeline=2xfilter=2" 1e-4 0 "${lenet[@]}" -- 4 "${lenet[@]}" --grid pipeline=2xfilter=2 --micro-batches 4
equivalent "lenet pipeline=2xchannel=2 gpipe" 1e-4 0 "${lenet[@]}" -- 4 "${lenet[@]}" --grid pipeline=2xchannel=2 --micro-batches 1 --schedule gpipe
equivalent "small-cnn pipeline=2xh=2" 1e-4 0 "${small[@]}" -- 4 "${small[@]}" --grid pipeline=2xh=2 --micro-batches 1
# VGG at 32^2 (10^8 weights, most in the first FC layer: the filter and channel axes split it).
# One micro-batch: VGG's two dropout layers draw their masks per micro-batch, in another order
# than one batch's (4 micro-batches are LeNet's and ResNet-20's, above and in parallel_test).
vgg11=(--model vgg11 --input 32x32 --classes 10 --batch-per-rank 8)
equivalent "vgg11 filter=2" 1e-4 0 "${vgg11[@]}" -- 2 "${vgg11[@]}" --grid filter=2
equivalent "vgg11 pipeline=2 gpipe" 1e-4 0 "${vgg11[@]}" -- 2 "${vgg11[@]}" --grid pipeline=2 --micro-batches 1 --schedule gpipe
# Placements (issue #16): an Inception-style model's units on 2 ranks (placed by the ILP here,
# by list scheduling below), its branches side by side, tensors crossing both ways, backward in
# segments, with an auxiliary classifier as Inception-v3 has (a second loss, weighted 0.4, on
# the main loss's rank; evaluated on every rank); and data=2 x place=2 against data=2.
minimodel="$(dirname "$0")/../../scripts/models/inception-mini.yaml"
sed '/  - {name: m2_b1, kind: conv/i\  - {name: aux_pool, kind: global_avgpool, inputs: m1_pool}\n  - {name: aux_fc, kind: fc, outputs: 10}\n  - {name: aux_loss, kind: softmax_loss}' \
  "$minimodel" >"$work/mini-aux.yaml"
aux=(--model "$work/mini-aux.yaml" --batch-per-rank 8)
equivalent "inception-mini with an auxiliary head place=2 (ILP)" 1e-4 0 "${aux[@]}" -- 2 "${aux[@]}" --grid place=2 \
  --placement-method ilp --placement-time-limit 2
mini=(--model "$minimodel" --batch-per-rank 8)
equivalent "inception-mini data=2xplace=2" 1e-4 2 "${mini[@]}" -- 4 "${mini[@]}" --grid data=2xplace=2
# ResNet-18 (residual branches, batch-norm) at 4 samples: after one step the weights equal one
# rank's within 1.2e-7, and then this net amplifies rounding ~20x a step (one rank on 2 threads
# against 1 thread: ~0.1 after 5 steps), so the bound is that noise.
r18=(--model resnet18 --input 32x32 --classes 10 --batch-per-rank 4)
equivalent "resnet18 place=2" noise 0 "${r18[@]}" -- 2 "${r18[@]}" --grid place=2

# refused RANKS PATTERN ARGS...: every rank prints one line matching PATTERN, exit 2.
refused() {
  local ranks=$1 pattern=$2; shift 2
  "${mpirun[@]}" -np "$ranks" "$paraxis" train --iterations 1 --quiet "$@" >"$work/out" 2>&1
  local code=$? lines; lines=$(grep -o -- "$pattern" "$work/out" | wc -l)  # ranks' lines may interleave
  if [ "$code" -ne 0 ] && [ "$lines" -eq "$ranks" ]; then
    pass
  else
    fail "$* on $ranks ranks: exit $code, $lines of $ranks ranks said '$pattern':"; cat "$work/out"
  fi
}
narrow=$(dirname "$0")/../data/narrow.yaml
refused 3 "layer 'two' (conv): 2 output channels cannot be split over 3 ranks (filter=3)" --model "$narrow" --grid filter=3
refused 2 "5 pipeline stages exceed the 4 layers of model 'narrow' that compute" --model "$narrow" --grid pipeline=5
refused 3 "grid filter=2 needs 2 ranks but 3 were started" --model lenet --grid filter=2
refused 2 "head=filter splits the head over the spatial ranks, and this grid has no spatial axis" --model lenet --grid data=2xhead=filter
refused 4 "grid place=2xfilter=2: a placement goes with the data axis only" --model lenet --grid place=2xfilter=2
# plan refuses the same layer with the same line.
if "$paraxis" plan --model "$narrow" --grid filter=3 --gpus 3 >"$work/out" 2>&1; then
  fail "plan accepted filter=3 on a 2-filter layer"
elif grep -q "layer 'two' (conv): 2 output channels cannot be split over 3 ranks" "$work/out"; then
  pass
else
  fail "plan's refusal:"; cat "$work/out"
fi
finish
