#!/usr/bin/env bash
# paraxis train: option errors, grids and strategy files it cannot run (yet).
source "$(dirname "$0")/lib.sh" "$@"

expect_error "--reduce-order: expected fifo or priority, found 'lifo'" train --model lenet --reduce-order lifo --iterations 1
expect_error "--density: must be in \(0, 1\], found .2." train --density 2
expect_error "--lr-schedule: expected constant, step or cosine" train --lr-schedule linear
expect_error "--optimizer: only sgd" train --optimizer adam
expect_error "unknown cluster .nosuch.: the presets are" train --cluster nosuch --iterations 1
expect_error "--device: 'gpu': expected cpu, cuda or cuda:N" train --device gpu
expect_error "--device: 'cuda:64': expected cpu, cuda or cuda:N \(N from 0 to 63\)" train --device cuda:64
# Debian's LibTorch has no CUDA: the CUDA path is built, and refused at run time with one line.
expect_error "--device cuda:0: this paraxis is built against a LibTorch without CUDA" train --device cuda --iterations 1
expect_error "--placement-method: expected list, ilp or auto, found .heft." train --grid place=2 --placement-method heft
expect_error "--placement-time-limit: .*" train --grid place=2 --placement-time-limit 0
expect_error "--threads: must be in \[0, 1024\], found .100000." train --threads 100000
expect_error "nope.json: cannot open the strategy file" train --plan nope.json
strategy=$(mktemp /tmp/paraxis-strategy.XXXXXX)
"$paraxis" plan --model small-cnn --gpus 8 --strategies data+filter --emit "$strategy" --csv >/dev/null
expect_error "grid data=[0-9]+xfilter=[0-9]+ needs 8 ranks but 1 were started" train --model small-cnn --plan "$strategy"
rm -f "$strategy"
expect_error "grid h=2 needs 2 ranks but 1 were started" train --model small-cnn --grid h=2
expect_error "grid filter=2 needs 2 ranks but 1 were started" train --grid filter=2
expect_error "grid data=2xpipeline=2 needs 4 ranks but 1 were started" train --grid data=2xpipeline=2
expect_error "--schedule: expected gpipe or 1f1b, found 'zigzag'" train --schedule zigzag
expect_error "grid d=2: model 'lenet' takes 1x28x28 samples; a spatial axis needs" train --grid d=2
expect_error "--grid" train --grid h=2 --plan some.json
expect_error "--grid: grid 'h=two': cannot read 'h=two'" train --grid h=two
expect_error "--bn-statistics: expected global or local, found 'batch'" train --bn-statistics batch
# Numeric options have domains; nan and inf are outside every one.
expect_error "--lr: must be in \(0, 1000\], found .nan." train --lr nan
expect_error "--lr: must be in \(0, 1000\], found .-1." train --lr -1
expect_error "--momentum: must be in \[0, 1\), found .2." train --momentum 2
expect_error "--batch-per-rank: must be in \[1, 16777216\], found .0." train --batch-per-rank 0
# A diverging run stops with the iteration and the first bad layer; it may skip such steps instead.
expect_error "training diverged at iteration [0-9]+: loss (nan|inf), first non-finite (gradient|parameter): conv1" \
  train --lr 1000 --iterations 40 --batch-per-rank 8 --quiet
expect_ok "samples/s" train --lr 1000 --iterations 40 --batch-per-rank 8 --quiet --skip-nonfinite
# Too few iterations past the warm-up: no figures, and it says so.
expect_ok "not reported: 0 of 3 iterations measured \(the first 3 warm up\); run at least 6" \
  train --iterations 3 --batch-per-rank 8 --quiet
# Into a pipe (as under mpirun or into a file) progress comes as whole lines, one per
# progress_interval, never redrawn with a carriage return.
progress=$(PARAXIS_PROGRESS_INTERVAL=0.1 "$paraxis" train --iterations 60 --batch-per-rank 32 --synthetic-samples 2048 --threads 1)
if [ "$(grep -c '^  iteration [0-9]*/60  epoch 1 ' <<<"$progress")" -ge 2 ] && ! grep -q $'\r' <<<"$progress"; then
  passed=$((passed + 1))
else
  echo "FAIL: progress into a pipe: $(cat -A <<<"$progress" | head -5)"; failures=$((failures + 1))
fi
PARAXIS_PROGRESS_INTERVAL=0 expect_error "PARAXIS_PROGRESS_INTERVAL: expected a value in \[0.1, 86400\] seconds, found '0'" train
finish
