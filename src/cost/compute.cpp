#include "cost/compute.hpp"

#include <algorithm>
#include <cmath>

namespace paraxis::cost {

double channelTileWaste(double tile, double inputChannels, double outputChannels, double inputShare,
                        double outputShare) {
  // Only where a local channel count falls below the tile (then the whole's may too).
  if (tile <= 1 || (inputChannels * inputShare >= tile && outputChannels * outputShare >= tile)) return 1;
  auto waste = [tile](double channels) { return std::max(channels, tile) / channels; };
  double factor = 1;
  if (inputShare < 1 && inputChannels > 0) factor *= waste(inputChannels * inputShare) / waste(inputChannels);
  if (outputShare < 1 && outputChannels > 0) factor *= waste(outputChannels * outputShare) / waste(outputChannels);
  return factor;
}

int kernelOf(const graph::Layer& layer) {
  using graph::LayerKind;
  if (layer.kind == LayerKind::kFullyConnected) return static_cast<int>(hw::Kernel::kFullyConnected);
  if (layer.kind != LayerKind::kConv && layer.kind != LayerKind::kDeconv) return -1;
  return static_cast<int>(layer.output.rank() == 3 ? hw::Kernel::kConv3d : hw::Kernel::kConv2d);
}

double reductionDepth(const graph::Layer& layer) {
  const double filters = static_cast<double>(layer.output.channels);
  if (kernelOf(layer) < 0 || filters <= 0) return 0;
  // Each filter's weights, without its bias: the terms each of its outputs sums.
  const bool bias = layer.kind == graph::LayerKind::kFullyConnected ? layer.as<graph::FcAttrs>().bias
                                                                     : layer.as<graph::ConvAttrs>().bias;
  return (static_cast<double>(layer.counts.params) - (bias ? filters : 0)) / filters;
}

bool accumulatesBySample(int kernel) {
  return kernel == static_cast<int>(hw::Kernel::kConv2d) || kernel == static_cast<int>(hw::Kernel::kConv3d);
}

double curveFlopShare(const LocalShare& s, bool weighted, const hw::Device& device) {
  const double calls = s.samples * s.spatial;
  if (weighted) return device.splitKeepsRate ? calls : calls * s.inputChannels * s.outputChannels;
  return calls * s.outputChannels;
}

namespace {

// A matrix kernel's rows per sample: its output positions.
double outputPositions(const graph::Layer& layer) {
  double positions = 1;
  for (const std::int64_t extent : layer.output.spatial) positions *= static_cast<double>(extent);
  return positions;
}

}  // namespace

NativeKernelRule nativeKernelRule(const graph::Layer& layer, const graph::TensorShape& input) {
  using graph::LayerKind;
  NativeKernelRule rule;
  rule.known = true;
  rule.fullyConnected = layer.kind == LayerKind::kFullyConnected;
  if (layer.kind != LayerKind::kConv && layer.kind != LayerKind::kDeconv) return rule;
  const auto& a = layer.as<graph::ConvAttrs>();
  auto all = [](const graph::Dims& dims, std::int64_t value) {
    return std::all_of(dims.begin(), dims.end(), [value](std::int64_t d) { return d == value; });
  };
  rule.convolution = true;
  rule.transposed = layer.kind == LayerKind::kDeconv;
  rule.pointwise = all(a.kernel, 1) && all(a.stride, 1) && all(a.dilation, 1);
  const std::size_t n = a.kernel.size();
  // A kernel given as one extent is that extent in every dimension.
  const std::int64_t last = n > 0 ? a.kernel.back() : 1, beforeLast = n >= 2 ? a.kernel[n - 2] : last;
  rule.alwaysOneDnn = a.groups > 1 || (last > 3 && beforeLast > 3);
  const double outside = static_cast<double>(rule.transposed ? input.channels : layer.output.channels);
  rule.columnsPerFlop = rule.pointwise || outside <= 0 ? 0 : 1 / (2 * outside);
  rule.leadingElements = static_cast<double>(input.channels);
  for (std::size_t i = 0; i < std::min<std::size_t>(2, input.spatial.size()); ++i) {
    rule.leadingElements *= static_cast<double>(input.spatial[i]);
  }
  return rule;
}

bool runsNativeKernel(const NativeKernelRule& rule, const LocalShare& s) {
  const bool one = hw::isOneSample(s.samples);
  if (!rule.known || rule.fullyConnected) return one;
  if (!rule.convolution) return false;
  if (rule.transposed || (rule.pointwise && s.samples < 16)) return true;
  if (rule.alwaysOneDnn || !one) return false;
  return s.samples * rule.leadingElements * s.inputSpatial * s.inputChannels <= kNativeLeadingElements;
}

double columnElements(const NativeKernelRule& rule, double forwardFlops, const LocalShare& s) {
  return rule.columnsPerFlop * forwardFlops * s.samples * s.spatial * (rule.transposed ? s.outputChannels : s.inputChannels);
}

double paddedTapShare(const graph::Layer& layer, const graph::TensorShape& input, int dim) {
  if (layer.kind != graph::LayerKind::kConv || dim < 0 || dim >= input.rank() || dim >= layer.output.rank())
    return 0;
  const auto& a = layer.as<graph::ConvAttrs>();
  auto at = [dim](const graph::Dims& v, std::int64_t fallback) {
    if (v.empty()) return fallback;
    return v.size() == 1 ? v.front() : v.at(static_cast<std::size_t>(dim));
  };
  const std::int64_t k = at(a.kernel, 1), s = at(a.stride, 1), p = at(a.padding, 0), d = at(a.dilation, 1);
  const std::int64_t extent = input.spatial[static_cast<std::size_t>(dim)];
  const std::int64_t outputs = layer.output.spatial[static_cast<std::size_t>(dim)];
  if (p <= 0 || outputs <= 0 || k <= 0) return 0;
  // Only the outputs within a kernel's span of an edge can reach the padding.
  std::int64_t padded = 0;
  auto count = [&](std::int64_t o) {
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t i = o * s - p + j * d;
      padded += i < 0 || i >= extent ? 1 : 0;
    }
  };
  const std::int64_t reach = (p + (k - 1) * d) / std::max<std::int64_t>(1, s) + 1;
  for (std::int64_t o = 0; o < std::min(outputs, reach); ++o) count(o);
  for (std::int64_t o = std::max(reach, outputs - reach); o < outputs; ++o) count(o);
  return static_cast<double>(padded) / static_cast<double>(k * outputs);
}

double windowTapScale(const graph::Layer& layer, const graph::TensorShape& input, int dim) {
  const double padded = paddedTapShare(layer, input, dim);
  return padded < 1 ? 1 / (1 - padded) : 1;
}

void applySpatialSplit(const graph::Layer& layer, const graph::TensorShape& input,
                       std::span<const int> splits, LocalShare& share) {
  for (std::size_t d = 0; d < splits.size(); ++d) {
    const auto whole = static_cast<double>(layer.output.spatial[d]);
    share.spatial *= std::ceil(whole / splits[d]) / whole;
    if (splits[d] > 1) share.tapScale *= windowTapScale(layer, input, static_cast<int>(d));
    if (input.rank() == layer.output.rank()) {
      const double halo = layer.counts.halo.size() > d ? static_cast<double>(layer.counts.halo[d]) : 0;
      const auto extent = static_cast<double>(input.spatial[d]);
      share.inputSpatial *= std::min(1.0, (std::ceil(extent / splits[d]) + 2 * halo) / extent);
    }
  }
}

bool isStrided(const graph::Layer& layer) {
  if (layer.kind != graph::LayerKind::kConv && layer.kind != graph::LayerKind::kDeconv) return false;
  const auto& stride = layer.as<graph::ConvAttrs>().stride;
  return std::any_of(stride.begin(), stride.end(), [](std::int64_t s) { return s > 1; });
}

int memoryKindOf(const graph::Layer& layer) {
  using graph::LayerKind;
  switch (layer.kind) {
    case LayerKind::kInput:
    case LayerKind::kFlatten:
    case LayerKind::kConv:
    case LayerKind::kDeconv:
    case LayerKind::kFullyConnected:
      return -1;
    case LayerKind::kMaxPool:
    case LayerKind::kAvgPool:
    case LayerKind::kAdaptiveAvgPool:
    case LayerKind::kGlobalAvgPool:
      return static_cast<int>(layer.output.rank() == 3 ? hw::MemoryKind::kPool3d : hw::MemoryKind::kPool2d);
    case LayerKind::kBatchNorm:
      return static_cast<int>(hw::MemoryKind::kNormalization);
    case LayerKind::kDropout: return static_cast<int>(hw::MemoryKind::kRandom);
    default:
      return static_cast<int>(hw::MemoryKind::kElementwise);
  }
}

LayerWork layerWork(const graph::Layer& layer, double inputElements, const LocalShare& s, int bytesPerElement,
                    const hw::Device& device, double inputChannels, const NativeKernelRule& nativeRule) {
  const double channelTile = device.channelTile;
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
  w.kernel = kernelOf(layer);
  w.memoryKind = memoryKindOf(layer);
  const double rows = s.samples * s.spatial * outputPositions(layer);
  const bool native = w.kernel >= 0 && runsNativeKernel(nativeRule, s);
  if (native) w.columnBytes = columnElements(nativeRule, static_cast<double>(c.forwardFlops), s) * delta;
  const double columns = device.nativeColumnTraffic * w.columnBytes;
  const double taps = s.tapScale;  // the window's padding taps: arithmetic, not the curve's key
  // One pass: its FLOPs (the layer's per sample), the bytes it moves beside them and before them.
  auto passOf = [&](double layerFlops, double bytes, double serialBytes) {
    return PassWork{layerFlops * flopShare * taps, bytes, rows, s.samples, serialBytes, native};
  };
  w.forward =
      passOf(static_cast<double>(c.forwardFlops), in + out + weights,
             (accumulatesBySample(w.kernel) ? device.forwardWeightBytes(weights, native) : 0) + columns);
  const bool dataPass = c.backwardDataFlops > 0, weightPass = c.backwardWeightFlops > 0;
  w.backwardData = passOf(static_cast<double>(c.backwardDataFlops), dataPass ? in + out + weights : 0,
                          dataPass ? columns : 0);
  const double weightBytes = accumulatesBySample(w.kernel)
                                 ? device.weightGradientTraffic.bytes(weights, s.samples, native)
                                 : weights;
  w.backwardWeight = passOf(static_cast<double>(c.backwardWeightFlops),
                            weightPass ? in + out + weightBytes : 0, weightPass ? columns : 0);
  const double depth = reductionDepth(layer) * s.inputChannels;
  const double curveShare = curveFlopShare(s, weighted, device);
  const bool strided = isStrided(layer);
  for (PassWork* pass : {&w.forward, &w.backwardData, &w.backwardWeight}) {
    pass->depth = depth;
    pass->resident = s.weightsResident;
    pass->strided = strided;
    if ((curveShare != flopShare || taps != 1) && flopShare > 0) {
      pass->curveFlops = pass->flops / taps * (curveShare / flopShare);
    }
  }
  w.backwardWeight.weightGradient = true;
  w.backwardWeight.filterShare = weighted ? s.outputChannels : 1;
  if (weighted) {
    w.tileWaste = channelTileWaste(channelTile, inputChannels, static_cast<double>(layer.output.channels),
                                   s.inputChannels, s.outputChannels);
  }
  return w;
}

namespace {

double serialSeconds(const hw::Device& device, const PassWork& work) {
  return work.serialBytes > 0 ? work.serialBytes * device.secondsPerByte(work.serialBytes) : 0;
}

}  // namespace

double passSeconds(const hw::Device& device, double peak, const PassWork& work, bool backward, int kernel,
                   int memoryKind) {
  if (work.flops <= 0 && work.bytes <= 0) return 0;
  // The curves describe matrix kernels; a memory-bound kind's arithmetic runs at the peak.
  const double efficiency =
      work.flops > 0 && memoryKind < 0
          ? device.efficiencyOf(kernel, backward, std::log(work.curveKey()), work.native) *
                device.shapeFactor(kernel, work.rows, work.native, work.depth, work.weightGradient,
                                   work.resident, work.strided, work.filterShare)
          : 1;
  const double compute = work.flops > 0 ? work.flops / (peak * efficiency) : 0;
  const double memory = work.bytes * device.secondsPerByte(work.bytes, memoryKind, backward);
  return device.callOverhead + std::max(compute, memory) + serialSeconds(device, work);
}

namespace {

double passWithEfficiency(const hw::Device& device, double peak, const PassWork& work, double efficiency,
                          double tileWaste, double memorySeconds) {
  if (work.flops <= 0 && work.bytes <= 0) return 0;
  const double compute = work.flops > 0 ? work.flops * tileWaste / (peak * efficiency) : 0;
  return device.callOverhead + std::max(compute, memorySeconds) + serialSeconds(device, work);
}

}  // namespace

LayerTimes layerTimes(const hw::Device& device, double peak, const LayerWork& work) {
  auto memorySeconds = [&](const PassWork& pass, bool backward) {
    return pass.bytes * device.secondsPerByte(pass.bytes, work.memoryKind, backward);
  };
  // A pass memory-bound even at the curve's lowest efficiency needs no curve lookup (exact);
  // gradients of weighted layers usually cost what forward costs: look the curve up once.
  auto efficiency = [&](const PassWork& pass, bool backward) {
    if (work.memoryKind >= 0) return 1.0;  // a memory-bound kind's arithmetic runs at the peak
    const double shape =
        device.shapeFactor(work.kernel, pass.rows, pass.native, pass.depth, pass.weightGradient,
                           pass.resident, pass.strided, pass.filterShare);
    if (device.efficiencyFloor > 0 &&
        pass.flops / (peak * device.efficiencyFloor * shape) <= memorySeconds(pass, backward)) {
      return device.efficiencyFloor * shape;
    }
    if (pass.flops <= 0) return 1.0;
    return device.efficiencyOf(work.kernel, backward, std::log(pass.curveKey()), pass.native) * shape;
  };
  const double forward = efficiency(work.forward, false);
  auto same = [&](const PassWork& pass) {
    const bool sameShape =
        !pass.weightGradient || work.kernel < 0 ||
        device.kernels[work.kernel].weightShare(pass.native, pass.depth, pass.filterShare) == 1;
    const bool asForward =
        pass.flops == work.forward.flops && !device.backwardDiffers(work.kernel, pass.native) && sameShape;
    return asForward ? forward : efficiency(pass, true);
  };
  return {passWithEfficiency(device, peak, work.forward, forward, work.tileWaste, memorySeconds(work.forward, false)),
          passWithEfficiency(device, peak, work.backwardData, same(work.backwardData), work.tileWaste,
                             memorySeconds(work.backwardData, true)),
          passWithEfficiency(device, peak, work.backwardWeight, same(work.backwardWeight), work.tileWaste,
                             memorySeconds(work.backwardWeight, true))};
}

std::vector<LayerProfile> profileLayers(const graph::Model& model) {
  using graph::LayerKind;
  std::vector<LayerProfile> out(model.size());
  for (int i = 0; i < model.size(); ++i) {
    const graph::Layer& layer = model.layer(i);
    LayerProfile& p = out[i];
    const graph::LayerCounts& c = layer.counts;
    p.view = layer.kind == LayerKind::kInput || layer.kind == LayerKind::kFlatten;
    p.weighted = layer.kind == LayerKind::kConv || layer.kind == LayerKind::kDeconv ||
                 layer.kind == LayerKind::kFullyConnected;
    p.kernel = kernelOf(layer);
    p.memoryKind = memoryKindOf(layer);
    p.positions = outputPositions(layer);
    p.depth = reductionDepth(layer);
    p.flops[0] = static_cast<double>(c.forwardFlops);
    p.flops[1] = static_cast<double>(c.backwardDataFlops);
    p.flops[2] = static_cast<double>(c.backwardWeightFlops);
    for (int k = 0; k < 3; ++k) p.logFlops[k] = p.flops[k] > 0 ? std::log(p.flops[k]) : 0;
    const graph::Layer& input = layer.inputs.empty() ? layer : model.layer(layer.inputs.front());
    p.inputElements = static_cast<double>(input.counts.activationBytes) / model.bytesPerElement();
    p.outputElements = static_cast<double>(c.activationBytes) / model.bytesPerElement();
    p.params = static_cast<double>(c.params);
    if (p.weighted) {
      p.inputChannels = static_cast<double>(input.output.channels);
      p.outputChannels = static_cast<double>(layer.output.channels);
    }
    p.native = nativeKernelRule(layer, input.output);
    p.strided = isStrided(layer);
  }
  return out;
}

double LogMemo::operator()(double x) {
  if (x != x_) {
    x_ = x;
    log_ = std::log(x);
  }
  return log_;
}

DeviceRates::DeviceRates(const hw::Device& d, double peakFlops)
    : device(&d),
      peak(peakFlops),
      secondsPerByte(1 / d.memoryBandwidth),
      floorSecondsPerFlop(d.efficiencyFloor > 0 ? 1 / (peakFlops * d.efficiencyFloor) : 0) {}

double nativeColumnBytes(const LayerProfile& profile, const LocalShare& share, int bytesPerElement) {
  if (profile.kernel < 0 || !runsNativeKernel(profile.native, share)) return 0;
  return columnElements(profile.native, profile.flops[0], share) * bytesPerElement;
}

double wholeModelWorkingSet(const graph::Model& model, const std::vector<LayerProfile>& profiles, double samples,
                            double optimizerStates) {
  LocalShare share;
  share.samples = samples;
  double columns = 0;
  for (const LayerProfile& profile : profiles) columns += nativeColumnBytes(profile, share, model.bytesPerElement());
  const graph::ModelTotals& totals = model.totals();
  return workingSetBytes(static_cast<double>(totals.params) * model.bytesPerElement(), optimizerStates,
                         static_cast<double>(totals.activationBytes) * samples, columns);
}

double wholeModelResidentShare(const graph::Model& model, const std::vector<LayerProfile>& profiles,
                               const hw::Device& device, double samples, double optimizerStates) {
  if (!device.weightsMayStayResident()) return 0;
  return device.residentShare(wholeModelWorkingSet(model, profiles, samples, optimizerStates));
}

LayerTimes layerTimes(const DeviceRates& rates, const LayerProfile& p, const LocalShare& s, int bytesPerElement,
                      LogMemo& logs) {
  if (p.view) return {};
  const hw::Device& device = *rates.device;
  const double peak = rates.peak;
  const double channelShare = p.weighted ? s.inputChannels * s.outputChannels : s.outputChannels;
  const double flopShare = s.samples * s.spatial * channelShare;
  const double curveShare = curveFlopShare(s, p.weighted, device);  // PassWork::curveFlops
  const double tileWaste =
      p.weighted && channelShare < 1
          ? channelTileWaste(device.channelTile, p.inputChannels, p.outputChannels, s.inputChannels, s.outputChannels)
          : 1;
  const double delta = bytesPerElement;
  const double bytes = p.inputElements * s.samples * s.inputSpatial * s.inputChannels * delta +
                       p.outputElements * s.samples * s.spatial * s.outputChannels * delta +
                       p.params * channelShare * delta;
  auto secondsFor = [&](double b) {
    return b * (device.bandwidthCurve.empty() ? rates.secondsPerByte : device.secondsPerByte(b));
  };
  const double memorySeconds = secondsFor(bytes);
  const double floorSeconds = rates.floorSecondsPerFlop;
  const bool native = p.kernel >= 0 && runsNativeKernel(p.native, s);
  const double rows = p.positions * s.samples * s.spatial, depth = p.depth * s.inputChannels;
  const double shapeFactor =
      p.weighted ? device.shapeFactor(p.kernel, rows, native, depth, false, s.weightsResident, p.strided) : 1;
  const double weightShapeFactor =
      p.weighted && p.kernel >= 0
          ? shapeFactor * device.kernels[p.kernel].weightShare(native, depth, s.outputChannels)
          : shapeFactor;
  double forwardEfficiency = -1;
  auto pass = [&](int k, bool hasBytes, double bytesSeconds) {
    // The window's padding taps count in the arithmetic, not in the curve's key (curveShare).
    const double flops = p.flops[k] * flopShare * s.tapScale;
    const int direction = k > 0 ? 1 : 0;
    const double kindEfficiency = p.memoryKind < 0 ? 1 : device.memoryEfficiency[p.memoryKind][direction];
    // A flat kind's pass runs at its share of the memory bandwidth whatever its size (each pass
    // of a memory kind, a batch norm's weight pass too, moves `bytes`).
    const bool flat = p.memoryKind >= 0 && device.memoryEfficiency.flat[p.memoryKind][direction];
    const double passBytesSeconds = hasBytes ? (flat ? bytes * rates.secondsPerByte : bytesSeconds) / kindEfficiency : 0;
    if (flops <= 0 && passBytesSeconds <= 0) return 0.0;
    if (flops <= 0) return device.callOverhead + passBytesSeconds;
    const double shape = k == 2 ? weightShapeFactor : shapeFactor;
    double efficiency;
    if (p.memoryKind >= 0) {
      efficiency = 1;
    } else if (floorSeconds > 0 && flops * floorSeconds <= passBytesSeconds * shape) {
      efficiency = device.efficiencyFloor * shape;
    } else if (k > 0 && forwardEfficiency >= 0 && p.flops[k] == p.flops[0] &&
               !device.backwardDiffers(p.kernel, native) && shape == shapeFactor) {
      efficiency = forwardEfficiency;
    } else {
      efficiency = device.efficiencyOf(p.kernel, k > 0, p.logFlops[k] + logs(curveShare), native) * shape;
    }
    if (k == 0) forwardEfficiency = efficiency;
    return device.callOverhead + std::max(flops * tileWaste / (peak * efficiency), passBytesSeconds);
  };
  // A convolution's weights: its forward over a batch may reorder them first, its weight pass
  // moves them as the device says (once by default).
  const double weights = p.params * channelShare * delta;
  const double reordered = accumulatesBySample(p.kernel) ? device.forwardWeightBytes(weights, native) : 0;
  const double columns =
      native && device.nativeColumnTraffic > 0
          ? device.nativeColumnTraffic * columnElements(p.native, p.flops[0], s) * delta
          : 0;
  const double columnSeconds = columns > 0 ? secondsFor(columns) : 0;
  const double forward = pass(0, true, memorySeconds) + secondsFor(reordered) + columnSeconds;
  const double weightPassSeconds = accumulatesBySample(p.kernel) && !device.weightGradientTraffic.once()
                                       ? secondsFor(bytes - weights + device.weightGradientTraffic.bytes(weights, s.samples, native))
                                       : memorySeconds;
  return {forward, pass(1, p.flops[1] > 0, memorySeconds) + (p.flops[1] > 0 ? columnSeconds : 0),
          pass(2, p.flops[2] > 0, weightPassSeconds) + (p.flops[2] > 0 ? columnSeconds : 0)};
}

}  // namespace paraxis::cost
