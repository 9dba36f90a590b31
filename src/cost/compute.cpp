#include "cost/compute.hpp"

#include <algorithm>

namespace paraxis::cost {

LayerWork layerWork(const graph::Layer& layer, double inputElements, const LocalShare& s, int bytesPerElement) {
  using graph::LayerKind;
  if (layer.kind == LayerKind::kInput || layer.kind == LayerKind::kFlatten) return {};  // views, no kernels
  const graph::LayerCounts& c = layer.counts;
  const bool weighted = layer.kind == LayerKind::kConv || layer.kind == LayerKind::kDeconv ||
                        layer.kind == LayerKind::kFullyConnected;
  // Weighted layers split both channel dimensions; the rest follow the output's channels.
  const double channelShare = weighted ? s.inputChannels * s.outputChannels : s.outputChannels;
  const double flopShare = s.samples * s.spatial * channelShare;
  const double delta = bytesPerElement;
  const double in = inputElements * s.samples * s.inputSpatial * s.inputChannels * delta;
  const double out = static_cast<double>(layer.output.elements()) * s.samples * s.spatial * s.outputChannels * delta;
  const double weights = static_cast<double>(c.params) * channelShare * delta;
  LayerWork w;
  w.forward = {c.forwardFlops * flopShare, in + out + weights};
  w.backwardData = {c.backwardDataFlops * flopShare, c.backwardDataFlops > 0 ? in + out + weights : 0};
  w.backwardWeight = {c.backwardWeightFlops * flopShare, c.backwardWeightFlops > 0 ? in + out + weights : 0};
  return w;
}

double passSeconds(const hw::Device& device, double peak, const PassWork& work) {
  if (work.flops <= 0 && work.bytes <= 0) return 0;
  const double compute = work.flops > 0 ? work.flops / (peak * device.efficiencyAt(work.flops)) : 0;
  const double memory = work.bytes / device.memoryBandwidth;
  return device.callOverhead + std::max(compute, memory);
}

LayerTimes layerTimes(const hw::Device& device, double peak, const LayerWork& work) {
  return {passSeconds(device, peak, work.forward), passSeconds(device, peak, work.backwardData),
          passSeconds(device, peak, work.backwardWeight)};
}

}  // namespace paraxis::cost
