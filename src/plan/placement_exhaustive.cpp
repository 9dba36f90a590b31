// Exact placement by enumeration, the reference the integer program is checked against: every
// assignment of units to devices (devices numbered in order of first use, as they are
// identical), and for each every topological order, each scheduled semi-actively (see
// scheduleInOrder: some order reaches the optimum of its assignment), pruned once a partial
// schedule already ends no sooner than the best found.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "core/error.hpp"
#include "plan/placement.hpp"

namespace paraxis::plan {
namespace {

constexpr int kMaxOperations = 12;

class OrderSearch {
 public:
  OrderSearch(const OpGraph& g, const std::vector<int>& device, int devices)
      : g_(g), device_(device), in_(g.inEdges()), out_(g.outEdges()), waiting_(g.size(), 0),
        finish_(g.size(), 0), free_(devices, 0) {
    for (const OpEdge& e : g.edges) ++waiting_[e.to];
  }

  // The best semi-active schedule over all topological orders, if it beats `bound`.
  double best(double bound, std::vector<int>& order) {
    best_ = bound;
    extend(0);
    order = bestOrder_;
    return best_;
  }

 private:
  void extend(double makespan) {
    if (makespan >= best_) return;
    if (static_cast<int>(order_.size()) == g_.size()) {
      best_ = makespan, bestOrder_ = order_;
      return;
    }
    for (int i = 0; i < g_.size(); ++i) {
      if (waiting_[i] != 0) continue;
      const int d = device_[g_.ops[i].unit];
      double start = free_[d];
      for (int e : in_[i]) start = std::max(start, g_.arrival(e, finish_[g_.edges[e].from], device_));
      const double savedFree = free_[d];
      finish_[i] = start + g_.busySeconds(i, in_[i], device_);
      free_[d] = finish_[i];
      waiting_[i] = -1;
      for (int e : out_[i]) --waiting_[g_.edges[e].to];
      order_.push_back(i);
      extend(std::max(makespan, finish_[i]));
      order_.pop_back();
      for (int e : out_[i]) ++waiting_[g_.edges[e].to];
      waiting_[i] = 0;
      free_[d] = savedFree;
    }
  }

  const OpGraph& g_;
  const std::vector<int>& device_;
  std::vector<std::vector<int>> in_, out_;
  std::vector<int> waiting_;  // inputs not yet scheduled; -1 once scheduled
  std::vector<double> finish_, free_;
  std::vector<int> order_, bestOrder_;
  double best_ = 0;
};

}  // namespace

OpPlacement exhaustivePlacement(const OpGraph& g, const PlacementLimits& limits) {
  if (g.size() > kMaxOperations) {
    throw ConfigError(fmt::format("exhaustive placement: {} operations, more than the {} it enumerates", g.size(),
                                  kMaxOperations));
  }
  OpPlacement best;
  best.makespan = std::numeric_limits<double>::infinity();
  std::vector<int> device(g.units(), 0);
  // Assignments in restricted-growth form: unit u uses a device at most one past those before it.
  const auto search = [&](auto&& self, int u, int used) -> void {
    if (u == g.units()) {
      std::vector<double> bytes(limits.devices, 0);
      for (int k = 0; k < g.units(); ++k) bytes[device[k]] += g.unitBytes[k];
      for (double b : bytes) {
        if (limits.memoryPerDevice > 0 && b > limits.memoryPerDevice) return;
      }
      std::vector<int> order;
      const double makespan = OrderSearch(g, device, limits.devices).best(best.makespan, order);
      if (makespan < best.makespan) best = scheduleInOrder(g, device, order);
      return;
    }
    for (int d = 0; d < std::min(limits.devices, used + 1); ++d) {
      device[u] = d;
      self(self, u + 1, std::max(used, d + 1));
    }
  };
  search(search, 0, 0);
  if (best.device.empty()) throw InfeasibleError("exhaustive placement: no assignment fits the devices' memory");
  best.lowerBound = best.makespan;
  best.optimal = true;
  best.method = "exhaustive";
  return best;
}

}  // namespace paraxis::plan
