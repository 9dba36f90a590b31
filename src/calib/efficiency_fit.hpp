#pragma once
// A device's efficiency curve and memory bandwidth fitted to timed layer calls (from
// `paraxis bench compute`): the compute model of compute.hpp, inverted.
#include <vector>

#include "hw/cluster.hpp"

namespace paraxis::calib {

struct TimedCall {
  double flops = 0;    // work of the call
  double bytes = 0;    // bytes it moves
  bool matrix = false; // a convolution or matrix product (else element-wise, pooling, ...)
  double seconds = 0;  // measured
};

struct DeviceFit {
  std::vector<hw::EfficiencyPoint> efficiency;  // empty: too few compute-bound calls
  double memoryBandwidth = 0;                   // 0: no memory-bound calls
  int computeCalls = 0, memoryCalls = 0;        // the calls each fit used
};

// Memory bandwidth: the median of bytes / (seconds - overhead) over the calls that are not
// matrix products. Efficiency: for the matrix products that are compute-bound at that
// bandwidth, FLOPs / (peak x (seconds - overhead)), the median per decade of FLOPs, made
// non-decreasing in FLOPs (the curve's contract) and at most 1.
DeviceFit fitDevice(const std::vector<TimedCall>& calls, double peak, double callOverhead);

}  // namespace paraxis::calib
