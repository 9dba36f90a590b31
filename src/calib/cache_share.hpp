#pragma once
// How much of the last-level cache one rank keeps (hw::Device::cacheShare): the rate of SGD's
// stream over growing buffers, timed with every rank of a node streaming at once, and the cache
// share that the oracle's residence model (hw::Device::residentShare) fits those rates with.
#include <cstddef>
#include <functional>
#include <vector>

namespace paraxis::calib {

struct StreamPoint {
  double bytes = 0;  // in all: weights, gradients and momenta, a third each
  double rate = 0;   // bytes read and written per second
};

// The buffer sizes the sweep times, smallest first (4 MiB to 256 MiB).
std::vector<double> streamSweepBytes();

// The rate of an SGD step with momentum (m = 0.9 m + g; p -= 0.01 m) over each size of
// streamSweepBytes(), in buffers allocated and touched once (first-touch faults are not timed):
// per size the median of five timed sets of passes, each at least 5 ms, after one warm pass.
// `beforeSet` runs before each set (a barrier lines the ranks up).
std::vector<StreamPoint> streamSweep(const std::function<void()>& beforeSet = {});

struct CacheFit {
  double cacheShare = 0;  // bytes; 0: the rates show no cache (the largest within 30 % of the smallest)
  double inCache = 0;     // rates, bytes/s: the fastest point's, and from memory (the model's)
  double inMemory = 0;
  // What is left of the rows a weight-streaming kernel runs at half rate over where its weights
  // are in the cache (hw::KernelCurves::residentRowsShare): inMemory / inCache; 1 without a share.
  double residentRowsShare() const { return cacheShare > 0 ? inMemory / inCache : 1; }
};

// The cache share whose residence model (a stream of S bytes at S <= share runs at `inCache`,
// the fastest point's rate; beyond it a share/S of it does, the rest at `inMemory`, the rate
// that gives the largest point's) fits the points' times best (least squared log error over
// shares from 1 MiB to half the largest buffer, 2^(1/8) apart).
CacheFit fitCacheShare(const std::vector<StreamPoint>& points);

}  // namespace paraxis::calib
