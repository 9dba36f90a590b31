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
  // activationBytes is the output's element count times the element size, already computed.
  const double out = static_cast<double>(c.activationBytes) / bytesPerElement * s.samples * s.spatial *
                     s.outputChannels * delta;
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

namespace {

double passWithEfficiency(const hw::Device& device, double peak, const PassWork& work, double efficiency) {
  if (work.flops <= 0 && work.bytes <= 0) return 0;
  const double compute = work.flops > 0 ? work.flops / (peak * efficiency) : 0;
  return device.callOverhead + std::max(compute, work.bytes / device.memoryBandwidth);
}

}  // namespace

LayerTimes layerTimes(const hw::Device& device, double peak, const LayerWork& work) {
  // A pass memory-bound even at the curve's lowest efficiency needs no curve lookup (exact);
  // gradients of weighted layers usually cost what forward costs: look the curve up once.
  auto efficiency = [&](const PassWork& pass) {
    if (device.efficiencyFloor > 0 &&
        pass.flops / (peak * device.efficiencyFloor) <= pass.bytes / device.memoryBandwidth) {
      return device.efficiencyFloor;
    }
    return device.efficiencyAt(pass.flops);
  };
  const double forward = efficiency(work.forward);
  auto same = [&](const PassWork& pass) { return pass.flops == work.forward.flops ? forward : efficiency(pass); };
  return {passWithEfficiency(device, peak, work.forward, forward),
          passWithEfficiency(device, peak, work.backwardData, same(work.backwardData)),
          passWithEfficiency(device, peak, work.backwardWeight, same(work.backwardWeight))};
}

}  // namespace paraxis::cost
