#pragma once
// The gradient-communication vocabulary (COST-MODELS.md section 5): how gradients are grouped,
// ordered, negotiated and put on the wire. One type with one set of defaults, used as it is by
// the oracle (plan), strategy files, the CLI and the runtime's engine (reduce), so a setting
// means the same thing where it is predicted and where it runs.
#include <cstdint>
#include <string>
#include <vector>

namespace paraxis {

enum class Grouping {
  kFusion,    // buckets closed at a byte threshold, the first one small to start early
  kPerLayer,  // one group per layer: every gradient tensor of a layer together
  kGroups,    // N groups of about equal bytes
};
enum class ReduceOrder {
  kFifo,             // groups in backward order, launched as they become ready
  kForwardPriority,  // the group the next forward needs first goes first, chunk by chunk
};
enum class Negotiation { kNone, kCentralized, kDecentralized };
enum class WireFormat { kF32, kF16, kBF16, kChunkSparse };
// The gradient allreduce's algorithm. kAuto: the oracle prices every candidate per group and
// picks the fastest (`plan --emit` writes its pick, so `train --plan` runs it); the runtime
// without a plan picks from its own default link figures. The others force one everywhere.
enum class GradientAlgorithm { kAuto, kRing, kRecursiveDoubling, kRabenseifner, kHierarchical };

struct GradientComm {
  bool overlap = true;  // reduce groups while backward continues
  Grouping grouping = Grouping::kFusion;
  double fusionBytes = 4.0 * (1 << 20);       // small groups overlap backward better than one big one
  double firstBucketBytes = 1.0 * (1 << 20);  // a small first bucket starts communication early
  int groups = 4;                             // for kGroups
  ReduceOrder order = ReduceOrder::kForwardPriority;
  double chunkBytes = 1.0 * (1 << 20);        // forward-priority: the unit a newly ready group can overtake
  Negotiation negotiation = Negotiation::kNone;
  double cycleSeconds = 0.5e-3;               // negotiation cycle (Horovod's cycle time)
  WireFormat wire = WireFormat::kF32;
  double density = 1.0;                       // chunk-sparse: fraction of chunks sent
  std::int64_t sparseChunkElements = 256;     // chunk-sparse: the unit selected by norm
  GradientAlgorithm algorithm = GradientAlgorithm::kAuto;

  bool sparse() const { return wire == WireFormat::kChunkSparse && density < 1.0; }
  // Bytes on the wire for `bytes` of fp32 gradients.
  double wireBytes(double bytes) const;
  // Throws ConfigError naming the field whose value is out of range, as a strategy file names
  // it ("SOURCE: comm.density: ...") or as the command line does ("--density: ...").
  enum class Names { kFile, kCommandLine };
  void validate(const std::string& source, Names names = Names::kFile) const;
};

// Groups of gradients over `bytes`, listed in backward order: consecutive runs of indices.
// An entry is one layer's gradients (all its tensors) for the oracle and the engine alike.
std::vector<std::vector<int>> formGradientGroups(const std::vector<double>& bytes, const GradientComm& settings);
// The same groups as the end (one past the last index) of each.
void gradientGroupEnds(const std::vector<double>& bytes, const GradientComm& settings, std::vector<int>& ends);

// Names as written in strategy files and accepted on the command line; the parsers throw
// ConfigError naming `what` and listing the accepted names.
std::string groupingName(Grouping g);
Grouping groupingFromName(const std::string& name, const std::string& what);
std::string orderName(ReduceOrder o);
ReduceOrder orderFromName(const std::string& name, const std::string& what);
std::string negotiationName(Negotiation n);
Negotiation negotiationFromName(const std::string& name, const std::string& what);
std::string wireName(WireFormat w);
WireFormat wireFromName(const std::string& name, const std::string& what);
// "auto", "ring", "recursive_doubling", "rabenseifner", "hierarchical": the oracle's and the
// runtime's names of the algorithms.
std::string gradientAlgorithmName(GradientAlgorithm a);
GradientAlgorithm gradientAlgorithmFromName(const std::string& name, const std::string& what);

}  // namespace paraxis
