#include "plan/time_sharing_walk.hpp"

#include <utility>

#include "plan/gradient_schedule.hpp"

namespace paraxis::plan::detail {

int noGroupAwaits(LayerArrays& a, int layers) {
  a.awaitedAt.assign(static_cast<std::size_t>(layers), 0);
  return 0;
}

int markGroupAwaits(const std::vector<cost::LayerProfile>& profiles, const GradientComm& comm,
                    LayerArrays& a) {
  const int n = static_cast<int>(profiles.size());
  noGroupAwaits(a, n);
  std::vector<double>& bytes = a.schedule.bytes;
  std::vector<int>& layers = a.gradientLayers;
  bytes.clear();
  layers.clear();
  for (int i = n - 1; i >= 0; --i) {
    if (!carriesGradient(profiles[i])) continue;
    bytes.push_back(localGradientBytes(profiles[i], a.splits[i]));
    layers.push_back(i);
  }
  gradientGroupEnds(bytes, comm, a.schedule.ends);
  for (const int end : a.schedule.ends) {
    a.awaitedAt[static_cast<std::size_t>(layers[end - 1])] = 1;  // the group's first layer in forward order
  }
  return layers.empty() ? 0 : layers.back();  // the last group's: the model's first layer with weights
}

double stretchSpans(const hw::TimeSharing& sharing, bool staged, double stageShare, int firstAwaited,
                    LayerArrays& a) {
  const int n = static_cast<int>(a.forward.size());
  // (layer, backward) in the order a rank computes them.
  const auto entry = [n](int k) { return k < n ? std::pair{k, false} : std::pair{2 * n - 1 - k, true}; };
  std::vector<double>& spans = a.spans;
  std::vector<int>& spanOf = a.spanOf;
  spans.clear();
  spanOf.resize(2 * static_cast<std::size_t>(n));
  double open = 0;
  for (int k = 0; k < 2 * n; ++k) {
    const auto [i, backward] = entry(k);
    open += (backward ? a.backward[i] : a.forward[i]) * stageShare;
    spanOf[k] = static_cast<int>(spans.size());
    const bool awaitNext = k + 1 < n && a.awaitedAt[k + 1] != 0;
    if (a.communication[i] > 0 || k == 2 * n - 1 || (staged && k == n - 1) || awaitNext) {
      spans.push_back(open);
      open = 0;
    }
  }
  for (int k = 0; k < 2 * n; ++k) {
    const auto [i, backward] = entry(k);
    const double factor = sharing.factor(spans[spanOf[k]]);
    if (backward) {
      a.backwardData[i] *= factor;
      a.backwardWeight[i] *= factor;
      a.backward[i] = a.backwardData[i] + a.backwardWeight[i];
    } else {
      a.forward[i] *= factor;
    }
  }
  return sharing.factor(spans[spanOf[firstAwaited]]);
}

}  // namespace paraxis::plan::detail
