#pragma once
// A device's efficiency curve and memory bandwidth fitted to timed layer calls (from
// `paraxis bench compute`): the compute model of compute.hpp, inverted.
#include <string>
#include <vector>

#include "cost/compute.hpp"
#include "hw/cluster.hpp"

namespace paraxis::calib {

struct TimedCall {
  double flops = 0;    // work of the call
  double bytes = 0;    // bytes it moves
  bool matrix = false; // a convolution or matrix product (else element-wise, pooling, ...)
  double seconds = 0;  // measured
  int kernel = -1;     // its hw::Kernel, for a matrix product
  int memoryKind = -1; // its hw::MemoryKind, for the rest (-1: element-wise)
  double rows = 0;     // a matrix product's rows: samples x output positions
  double depth = 0;    // its reduction depth (cost::reductionDepth of the local share; 0: unknown)
  double samples = 0;  // the call's samples; 0: unknown
  bool native = false; // LibTorch ran it with its own kernel (cost::runsNativeKernel)
  bool strided = false;  // a convolution over a stride above 1 (hw::KernelCurves::stridedShare)
  // Its backward passes (the gradients of data and of weights), when they were timed: each
  // pass's work, the weight pass's bytes moving the weights once, and their seconds together.
  cost::PassWork backwardData, backwardWeight;
  double backwardSeconds = 0;
  // A convolution's weight bytes, which its forward may reorder (hw::Device::forwardWeightTraffic)
  // and its weight-gradient pass move more than once (hw::WeightGradientTraffic); 0 for the rest.
  double accumulatedWeights = 0;
  double columnBytes = 0;  // a native convolution's column buffer per pass (hw::Device::nativeColumnTraffic)
  // The bytes its model touched per pass at that batch (cost::workingSetBytes, no optimizer
  // state), and the share of its weights that left in the cache (hw::Device::residentShare;
  // fitDevice sets it from the cache share it is given).
  double workingSet = 0;
  double resident = 0;
  // Where timed on the thread's CPU clock (one thread a rank on the CPU), its seconds are CPU
  // time, and its steps' wall time over their CPU time and their mean CPU seconds (the span of
  // compute the ranks time-shared the cores over: hw::TimeSharing, fitted to them); 0 where
  // timed on the wall clock (a GPU, more than one thread a rank).
  double wallPerCpu = 0;
  double stepCpuSeconds = 0;
  std::string layer;  // its name, for reports

  int backwardPasses() const { return (backwardData.flops > 0 ? 1 : 0) + (backwardWeight.flops > 0 ? 1 : 0); }
  double backwardFlops() const { return backwardData.flops + backwardWeight.flops; }
  double backwardBytes() const { return backwardData.bytes + backwardWeight.bytes; }
  // The weight pass's work with the weights moved as `traffic` says.
  cost::PassWork weightPass(const hw::WeightGradientTraffic& traffic) const;
  // The forward's work, a batch's convolution reordering its weights and a native one moving
  // its column buffer as `device` says.
  cost::PassWork forwardPass(const hw::Device& device) const;
  // Its backward passes' seconds on `device` at `peak`: the weight pass moving the weights as
  // the device's traffic says, each pass of a native call its column buffer.
  double backwardSecondsOn(const hw::Device& device, double peak) const;
  // The bytes a pass moves before or after its arithmetic for its column buffer on `device`.
  double columnTraffic(const hw::Device& device) const { return native ? device.nativeColumnTraffic * columnBytes : 0; }
};

struct DeviceFit {
  std::vector<hw::EfficiencyPoint> efficiency;          // empty: too few compute-bound calls
  std::vector<hw::EfficiencyPoint> backwardEfficiency;  // by the FLOPs of one backward pass; empty: none timed
  hw::KernelCurves kernels[hw::kKernels];               // per kernel, from its own calls (empty: too few)
  double memoryBandwidth = 0;                           // 0: no element-wise calls
  std::vector<hw::EfficiencyPoint> bandwidthCurve;      // {bytes, bytes/s}: per decade of bytes
  hw::MemoryEfficiency memoryEfficiency;                // per kind, forward and backward
  int computeCalls = 0, memoryCalls = 0, backwardCalls = 0;  // the calls each fit used
  double peak = 0;  // what the efficiencies are fractions of: the given peak, or a faster call's rate
  hw::WeightGradientTraffic weightGradientTraffic;  // what fits the convolutions' backward passes best
  double forwardWeightTraffic = 0;  // the weights a convolution's forward reorders first, what fits its forward best
  double nativeColumnTraffic = 0;   // a native convolution's column buffer per pass, what fits those calls best
};

// Memory bandwidth: bytes / (seconds - overhead) of the element-wise calls, overall and per
// decade of bytes (the curve); then per memory kind (2-D and 3-D pooling, normalization,
// element-wise) and pass, the fraction of that curve its calls reached. Efficiency: for the
// matrix products that are compute-bound at that bandwidth, per decade of FLOPs the decade's
// FLOPs / (peak x its seconds - overhead), made non-decreasing in FLOPs (the curve's contract),
// where the peak is raised to the fastest call's rate if a call ran faster than `peak` (so
// efficiencies stay <= 1). The backward curve the same
// from the matrix products' backward passes, at the FLOPs of one pass. Then both curves again
// per kernel kind (2-D and 3-D convolutions, matrix products), from that kind's calls alone,
// with the rows at which the kind runs at half its curve's rate (hw::KernelCurves::halfRateRows,
// and oneSampleHalfRateRows for its one-sample calls when there are any) and the reduction
// depth at which it does (hw::KernelCurves::halfRateDepth) where that fits its calls better.
// Before the curves, the weight-gradient traffic (1 to 12 times the weights per
// pass, 0 to 4 per sample) whose memory-bound weight passes, left out of the backward curve,
// make the convolutions' backward times over batches fit best, then the one-sample calls' own
// count (0.5 to 12 times, or as a batch). Then the weights a batch's convolution
// forward moves before its arithmetic (0 to 12 times them, hw::Device::forwardWeightTraffic):
// the count whose curves, fitted to the forward times less that traffic, predict the
// convolutions' whole forward times best; then the times each pass of a native convolution
// moves its column buffer (0 to 12, hw::Device::nativeColumnTraffic) that predicts those calls'
// whole times best; the curves above are fitted so.
// `weightReorders`: fit the weight traffic oneDNN adds on CPUs (the forward's reorder, the
// weight-gradient pass's per-sample accumulation). Off for a GPU's calls: cuDNN reads the
// weights once, and the traffic fit there turned timing noise into near-zero compute times
// (and an efficiency curve no cluster file accepts).
// `residentRowsShare`: what is left of a fully connected layer's half-rate rows where its
// weights are in the cache (the stream's rate from memory over its rate from the cache,
// calib::CacheFit; 1: none), with each call's resident share of its weights (setResidentShares).
DeviceFit fitDevice(const std::vector<TimedCall>& calls, double peak, double callOverhead, bool weightReorders = true,
                    double residentRowsShare = 1);

// Each call's share of its weights (and its backward passes') that a cache of `cacheShare` bytes
// kept at its working set (hw::Device::residentShare; 0: none).
void setResidentShares(std::vector<TimedCall>& calls, double cacheShare);

// The largest counts the traffic fits try: a weight-gradient pass's per pass (and at one
// sample), per sample, and the forward's reorder and a native call's column buffer.
inline constexpr double kLargestPerPassCount = 12;
inline constexpr double kLargestPerSampleCount = 4;
inline constexpr double kLargestTrafficCount = 12;
// The device's traffic counts that sit at the largest the fit tries, by their keys
// ("weight_gradient_traffic.per_pass", ...): a count there did not settle on a figure of the
// kernels' traffic but stands in for time the model lacks (2026-12-05: per_pass 12 came with
// resnet18@64's one-sample pipeline micro-batches predicted 25-64 % long).
std::vector<std::string> trafficCountsAtTheirLimit(const hw::Device& device);

}  // namespace paraxis::calib
