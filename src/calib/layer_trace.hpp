#pragma once
// The layers of a measured run one by one, from its `train --trace` file (docs/trace.md):
// what `validate --trace` holds the oracle's per-layer times against.
#include <string>
#include <vector>

#include "calib/trace_events.hpp"

namespace paraxis::calib {

// One layer's times on the rank that ran it, the medians over the measured steps' calls (a
// pipeline's: one micro-batch, as the oracle's layer times are). Its forward and backward are
// its compute: the `layer` and `layer_backward` intervals less the halo exchanges, shuffles and
// layer collectives of the main thread inside them, which are `communication`. A backward
// interval holding another layer's is not the layer's own (a branch's, ended by the join) and
// is left out: backwardCalls 0 where every one of them is.
struct MeasuredLayer {
  std::string name;
  int rank = 0;
  double forward = 0, backward = 0, communication = 0;  // seconds
  int forwardCalls = 0, backwardCalls = 0;              // the calls the medians are over
};

// The layers in the order they first ran, each from `rank` where it runs there, else from the
// lowest rank that ran it (a pipeline's other stages). Only calls inside measured steps count
// (not the warm-up's, not an evaluation's). Throws ConfigError naming the file when it cannot be
// read, is not a Chrome trace, or holds no measured step's layer.
std::vector<MeasuredLayer> readLayerTrace(const std::string& path, int rank);
// The same from the file's events already read (`path` names it in messages).
std::vector<MeasuredLayer> layersOfTrace(const RankTraces& traces, int rank, const std::string& path);

}  // namespace paraxis::calib
