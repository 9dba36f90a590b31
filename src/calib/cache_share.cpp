#include "calib/cache_share.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/median.hpp"

namespace paraxis::calib {

std::vector<double> streamSweepBytes() {
  std::vector<double> sizes;
  for (const double mib : {4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256}) sizes.push_back(mib * 1024 * 1024);
  return sizes;
}

namespace {

using Clock = std::chrono::steady_clock;

// One pass of SGD with momentum over n weights: what a step's update streams.
void sgdPass(float* p, float* g, float* m, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    m[i] = 0.9f * m[i] + g[i];
    p[i] -= 0.01f * m[i];
  }
}

constexpr double kSetSeconds = 5e-3;
constexpr int kSets = 5;

// The rate over the first `n` weights of the buffers.
double streamRate(float* p, float* g, float* m, std::size_t n, const std::function<void()>& beforeSet) {
  sgdPass(p, g, m, n);
  std::vector<double> rates;
  for (int set = 0; set < kSets; ++set) {
    if (beforeSet) beforeSet();
    const auto start = Clock::now();
    double seconds = 0;
    int passes = 0;
    do {
      sgdPass(p, g, m, n);
      ++passes;
      seconds = std::chrono::duration<double>(Clock::now() - start).count();
    } while (seconds < kSetSeconds);
    rates.push_back(passes * 3.0 * static_cast<double>(n * sizeof(float)) / seconds);
  }
  // p is read after the sets: the passes cannot be optimised away.
  return p[n / 2] > -1e30f ? median(rates) : 0;
}

}  // namespace

std::vector<StreamPoint> streamSweep(const std::function<void()>& beforeSet) {
  const std::vector<double> sizes = streamSweepBytes();
  const auto largest = static_cast<std::size_t>(sizes.back() / 3 / sizeof(float));
  std::vector<float> p(largest, 1.0f), g(largest, 1e-3f), m(largest, 0.0f);
  std::vector<StreamPoint> points;
  for (const double bytes : sizes) {
    const auto n = static_cast<std::size_t>(bytes / 3 / sizeof(float));
    points.push_back({bytes, streamRate(p.data(), g.data(), m.data(), n, beforeSet)});
  }
  return points;
}

namespace {

// Seconds per byte of a stream of `bytes` with a cache of `share` bytes.
double secondsPerByte(double bytes, double share, double inCache, double inMemory) {
  const double resident = std::min(1.0, share / bytes);
  return resident / inCache + (1 - resident) / inMemory;
}

}  // namespace

CacheFit fitCacheShare(const std::vector<StreamPoint>& points) {
  CacheFit fit;
  if (points.size() < 3) return fit;
  for (const StreamPoint& p : points) fit.inCache = std::max(fit.inCache, p.rate);
  const StreamPoint& largest = points.back();
  fit.inMemory = largest.rate;
  if (!(fit.inMemory > 0) || fit.inCache < 1.3 * fit.inMemory) return fit;
  const double lastShare = largest.bytes / 2;  // beyond it the largest buffer would run mostly from the cache
  double best = -1;
  for (double share = 1 << 20; share <= lastShare; share *= std::pow(2.0, 0.125)) {
    // The memory's rate that gives the largest buffer's with this share resident.
    const double resident = std::min(1.0, share / largest.bytes);
    const double inMemory = (1 - resident) / (1 / largest.rate - resident / fit.inCache);
    if (!(inMemory > 0)) continue;
    double error = 0;
    for (const StreamPoint& p : points) {
      const double e = std::log(p.rate * secondsPerByte(p.bytes, share, fit.inCache, inMemory));
      error += e * e;
    }
    if (best < 0 || error < best) {
      best = error;
      fit.cacheShare = share;
      fit.inMemory = inMemory;
    }
  }
  return fit;
}

}  // namespace paraxis::calib
