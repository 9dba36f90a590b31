#include "alphabeta/collective_cost.hpp"

#include <cmath>

namespace paraxis::alphabeta {
namespace {

int ceilLog2(int p) {
  int steps = 0;
  while ((1 << steps) < p) ++steps;
  return steps;
}

int floorPow2(int p) {
  int q = 1;
  while (q * 2 <= p) q *= 2;
  return q;
}

// Non-powers of two fold the extra ranks in and out: one full-vector send, one reduction
// and one full-vector send back.
double fold(int p, double m, const LinkParams& l) {
  return floorPow2(p) == p ? 0.0 : 2 * (l.alpha + m * l.beta) + m * l.gamma;
}

}  // namespace

double ringAllreduce(int p, double m, const LinkParams& l) {
  if (p <= 1) return 0;
  const double f = static_cast<double>(p - 1) / p;
  return 2 * (p - 1) * l.alpha + 2 * f * m * l.beta + f * m * l.gamma;
}

double recursiveDoublingAllreduce(int p, double m, const LinkParams& l) {
  if (p <= 1) return 0;
  const int steps = ceilLog2(floorPow2(p));
  return steps * (l.alpha + m * l.beta + m * l.gamma) + fold(p, m, l);
}

double rabenseifnerAllreduce(int p, double m, const LinkParams& l) {
  if (p <= 1) return 0;
  const int q = floorPow2(p);
  const double f = static_cast<double>(q - 1) / q;
  return 2 * ceilLog2(q) * l.alpha + 2 * f * m * l.beta + f * m * l.gamma + fold(p, m, l);
}

double binomialAllreduce(int p, double m, const LinkParams& l) {
  if (p <= 1) return 0;
  const int steps = ceilLog2(p);
  return 2 * steps * (l.alpha + m * l.beta) + steps * m * l.gamma;
}

double hierarchicalAllreduce(int local, int nodes, double m, const LinkParams& intra, const LinkParams& inter) {
  const double shard = m / local;
  return ringReduceScatter(local, m, intra) + ringAllreduce(nodes, shard, inter) + ringAllgather(local, m, intra);
}

double ringAllgather(int p, double m, const LinkParams& l) {
  if (p <= 1) return 0;
  return (p - 1) * l.alpha + static_cast<double>(p - 1) / p * m * l.beta;
}

double ringReduceScatter(int p, double m, const LinkParams& l) {
  if (p <= 1) return 0;
  const double f = static_cast<double>(p - 1) / p;
  return (p - 1) * l.alpha + f * m * l.beta + f * m * l.gamma;
}

double binomialBroadcast(int p, double m, const LinkParams& l) {
  return p <= 1 ? 0 : ceilLog2(p) * (l.alpha + m * l.beta);
}

double pairwiseAlltoall(int p, double m, const LinkParams& l) {
  return p <= 1 ? 0 : (p - 1) * (l.alpha + m / p * l.beta);
}

double pointToPoint(double m, const LinkParams& l) { return l.alpha + m * l.beta; }

std::string_view choiceName(AllreduceChoice choice) {
  switch (choice) {
    case AllreduceChoice::kRing: return "ring";
    case AllreduceChoice::kRecursiveDoubling: return "recursive_doubling";
    case AllreduceChoice::kRabenseifner: return "rabenseifner";
    case AllreduceChoice::kHierarchical: return "hierarchical";
  }
  return "?";
}

AllreduceEstimate bestFlatAllreduce(int p, double m, const LinkParams& l) {
  AllreduceEstimate best{AllreduceChoice::kRing, ringAllreduce(p, m, l)};
  const AllreduceEstimate others[] = {
      {AllreduceChoice::kRecursiveDoubling, recursiveDoublingAllreduce(p, m, l)},
      {AllreduceChoice::kRabenseifner, rabenseifnerAllreduce(p, m, l)}};
  for (const auto& e : others) {
    if (e.seconds < best.seconds) best = e;
  }
  return best;
}

}  // namespace paraxis::alphabeta
