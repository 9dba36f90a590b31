#!/usr/bin/env bash
# paraxis train: option errors, grids and strategy files it cannot run (yet).
source "$(dirname "$0")/lib.sh" "$@"

expect_error "--reduce-order: expected fifo or priority, found 'lifo'" train --model lenet --reduce-order lifo --iterations 1
expect_error "--density: expected a fraction in \(0, 1\], found 2" train --density 2
expect_error "--lr-schedule: expected constant, step or cosine" train --lr-schedule linear
expect_error "--optimizer: only sgd" train --optimizer adam
expect_error "--threads: Value 100000 not in range 0 to 1024" train --threads 100000
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
finish
