#include "core/gradient_comm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "core/error.hpp"

namespace paraxis {
namespace {

template <typename Enum, std::size_t N>
Enum fromName(const std::string& name, const std::string& what, const std::pair<Enum, const char*> (&names)[N]) {
  std::vector<std::string> accepted;
  for (const auto& [value, text] : names) {
    if (name == text) return value;
    accepted.emplace_back(text);
  }
  const std::string last = accepted.back();
  accepted.pop_back();
  throw ConfigError(fmt::format("{}: expected {} or {}, found '{}'", what, fmt::join(accepted, ", "), last, name));
}

template <typename Enum, std::size_t N>
std::string toName(Enum value, const std::pair<Enum, const char*> (&names)[N]) {
  for (const auto& [v, text] : names) {
    if (v == value) return text;
  }
  return "?";
}

constexpr std::pair<Grouping, const char*> kGroupings[] = {
    {Grouping::kFusion, "fusion"}, {Grouping::kPerLayer, "per-layer"}, {Grouping::kGroups, "groups"}};
constexpr std::pair<ReduceOrder, const char*> kOrders[] = {{ReduceOrder::kFifo, "fifo"},
                                                           {ReduceOrder::kForwardPriority, "priority"}};
constexpr std::pair<Negotiation, const char*> kNegotiations[] = {
    {Negotiation::kNone, "none"}, {Negotiation::kCentralized, "centralized"}, {Negotiation::kDecentralized, "decentralized"}};
constexpr std::pair<WireFormat, const char*> kWires[] = {{WireFormat::kF32, "fp32"},
                                                         {WireFormat::kF16, "fp16"},
                                                         {WireFormat::kBF16, "bf16"},
                                                         {WireFormat::kChunkSparse, "chunk-sparse"}};
constexpr std::pair<GradientAlgorithm, const char*> kAlgorithms[] = {
    {GradientAlgorithm::kAuto, "auto"},
    {GradientAlgorithm::kRing, "ring"},
    {GradientAlgorithm::kRecursiveDoubling, "recursive_doubling"},
    {GradientAlgorithm::kRabenseifner, "rabenseifner"},
    {GradientAlgorithm::kHierarchical, "hierarchical"}};

}  // namespace

double GradientComm::wireBytes(double bytes) const {
  switch (wire) {
    case WireFormat::kF16:
    case WireFormat::kBF16: return bytes / 2;
    case WireFormat::kChunkSparse: return bytes * density;
    case WireFormat::kF32: break;
  }
  return bytes;
}

void GradientComm::validate(const std::string& source, Names names) const {
  // The field as a strategy file's key and as a command-line option (none: file only).
  auto fail = [&](const char* key, const char* option, const std::string& expected, double found) {
    const std::string where = names == Names::kCommandLine && option != nullptr
                                  ? std::string(option)
                                  : fmt::format("{}: comm.{}", source, key);
    throw ConfigError(fmt::format("{}: expected {}, found {:g}", where, expected, found));
  };
  auto size = [](double v) { return std::isfinite(v) && v > 0 && v <= 1e12; };
  if (!size(fusionBytes)) fail("fusion_bytes", "--fusion-bytes", "a size in (0, 1 TB]", fusionBytes);
  if (!size(firstBucketBytes)) {
    fail("first_bucket_bytes", "--first-bucket-bytes", "a size in (0, 1 TB]", firstBucketBytes);
  }
  if (groups < 1 || groups > 1'000'000) fail("groups", "--groups", "a count in [1, 1000000]", groups);
  if (!size(chunkBytes) || chunkBytes < 4) fail("chunk_bytes", nullptr, "a size in [4 B, 1 TB]", chunkBytes);
  if (!std::isfinite(cycleSeconds) || cycleSeconds < 0 || cycleSeconds > 10) {
    fail("cycle_seconds", "--cycle", "seconds in [0, 10]", cycleSeconds);
  }
  if (!(density > 0 && density <= 1)) fail("density", "--density", "a fraction in (0, 1]", density);
  if (density < 1 && wire != WireFormat::kChunkSparse) {
    fail("density", "--density", "1 unless the wire is chunk-sparse", density);
  }
  if (sparseChunkElements < 1 || sparseChunkElements > (1 << 30)) {
    fail("sparse_chunk_elements", nullptr, "elements in [1, 2^30]", static_cast<double>(sparseChunkElements));
  }
}

void gradientGroupEnds(const std::vector<double>& bytes, const GradientComm& rule, std::vector<int>& ends) {
  ends.clear();
  const double total = std::accumulate(bytes.begin(), bytes.end(), 0.0);
  double size = 0;
  const int n = static_cast<int>(bytes.size());
  for (int i = 0; i < n; ++i) {
    size += bytes[i];
    double threshold = rule.fusionBytes;
    if (rule.grouping == Grouping::kFusion && ends.empty()) threshold = rule.firstBucketBytes;
    if (rule.grouping == Grouping::kGroups) threshold = total / std::max(1, rule.groups);
    const bool lastSlot = rule.grouping == Grouping::kGroups && static_cast<int>(ends.size()) + 1 >= rule.groups;
    if (rule.grouping == Grouping::kPerLayer || (size >= threshold && !lastSlot)) {
      ends.push_back(i + 1);
      size = 0;
    }
  }
  if (n > 0 && (ends.empty() || ends.back() != n)) ends.push_back(n);
}

std::vector<std::vector<int>> formGradientGroups(const std::vector<double>& bytes, const GradientComm& rule) {
  std::vector<int> ends;
  gradientGroupEnds(bytes, rule, ends);
  std::vector<std::vector<int>> groups;
  int begin = 0;
  for (int end : ends) {
    std::vector<int>& group = groups.emplace_back();
    for (int i = begin; i < end; ++i) group.push_back(i);
    begin = end;
  }
  return groups;
}

std::string groupingName(Grouping g) { return toName(g, kGroupings); }
Grouping groupingFromName(const std::string& name, const std::string& what) { return fromName(name, what, kGroupings); }
std::string orderName(ReduceOrder o) { return toName(o, kOrders); }
ReduceOrder orderFromName(const std::string& name, const std::string& what) { return fromName(name, what, kOrders); }
std::string negotiationName(Negotiation n) { return toName(n, kNegotiations); }
Negotiation negotiationFromName(const std::string& name, const std::string& what) {
  return fromName(name, what, kNegotiations);
}
std::string wireName(WireFormat w) { return toName(w, kWires); }
WireFormat wireFromName(const std::string& name, const std::string& what) { return fromName(name, what, kWires); }
std::string gradientAlgorithmName(GradientAlgorithm a) { return toName(a, kAlgorithms); }
GradientAlgorithm gradientAlgorithmFromName(const std::string& name, const std::string& what) {
  return fromName(name, what, kAlgorithms);
}

}  // namespace paraxis
