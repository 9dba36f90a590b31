#pragma once
// Compute time of one layer pass on one device, from the *local* problem the rank runs
// (COST-MODELS.md section 2): a roofline of FLOPs at the efficiency the device reaches for a
// call of that size, and bytes at its memory bandwidth, plus a fixed per-call overhead.
// Small local problems (a thin slab, a few filters, a micro-batch of one) therefore run at
// low efficiency instead of being assumed to scale — the error ParaDL makes.
#include "graph/layer.hpp"
#include "hw/cluster.hpp"

namespace paraxis::cost {

// The share of a layer one rank computes.
struct LocalShare {
  double samples = 1;         // samples in the local batch
  double spatial = 1;         // fraction of output positions (spatial split)
  double inputSpatial = 1;    // fraction of input positions, halo included
  double inputChannels = 1;   // fraction of input channels (channel split)
  double outputChannels = 1;  // fraction of output channels (filter split)
};

struct PassWork {
  double flops = 0;
  double bytes = 0;
};

struct LayerWork {
  PassWork forward, backwardData, backwardWeight;
};

// FLOPs and bytes moved per pass for the local share of `layer`, whose first input has
// `inputElements` per sample.
LayerWork layerWork(const graph::Layer& layer, double inputElements, const LocalShare& share, int bytesPerElement);

// overhead + max(flops / (peak x efficiency(flops)), bytes / memory bandwidth); 0 for no work.
double passSeconds(const hw::Device& device, double peak, const PassWork& work);

struct LayerTimes {
  double forward = 0, backwardData = 0, backwardWeight = 0;
};

LayerTimes layerTimes(const hw::Device& device, double peak, const LayerWork& work);

}  // namespace paraxis::cost
