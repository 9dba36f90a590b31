#pragma once
// ParaDL's own published equations (Kahira et al., HPDC 2021), to reproduce its projections.
// ParaDL sees a network as a table of layers (x, w, y dimensions) whose compute is one
// measured time per sample, shared out over the layers in proportion to ParaDL's FLOP
// formula; communication is α-β over ring collectives with its platform's latency rule.
// The table comes either from ParaDL's own network file (its "name|x|w|y|comp" format) or
// from a paraxis model. `paraxis plan --model-variant paradl` prints these beside nothing
// else: it reproduces ParaDL, errors included (COST-MODELS.md, "where the papers are wrong").
#include <cstdint>
#include <string>
#include <vector>

#include "cost/collective_cost.hpp"
#include "graph/model.hpp"
#include "hw/cluster.hpp"
#include "plan/strategy.hpp"

namespace paraxis::plan {

struct ParadlLayer {
  std::string name;
  std::string kind;  // CONV, FC, BNORM, RELU, MPOOL, APOOL, ADD, or another word (no FLOPs)
  std::vector<std::int64_t> x, w, y;
  double comp = 0;  // seconds per sample, after shareCompute()

  std::int64_t in() const;
  std::int64_t weight() const;  // product of w; 0 for layers without weights (a 0 in w)
  std::int64_t out() const;
  double flops() const;         // ParaDL's training FLOPs: 2 x forward + weight gradient
};

struct ParadlNetwork {
  std::string name;
  double samples = 0;  // data set size, when the file gives it
  std::vector<ParadlLayer> layers;

  double totalWeight() const;
};

// ParaDL's network file; ConfigError naming the file and line on a malformed one.
ParadlNetwork readParadlNetwork(const std::string& path);
// The same table for a paraxis model (input, flatten and loss layers have no ParaDL row).
ParadlNetwork paradlNetworkOf(const graph::Model& model);
// Sets each layer's comp to sampleSeconds x its share of the network's ParaDL FLOPs.
void shareCompute(ParadlNetwork& network, double sampleSeconds);

// ParaDL's platform: the latency and bandwidth of a ring over `ranks` consecutive GPUs.
struct ParadlPlatform {
  struct Tier {
    std::int64_t ranks;  // rings up to this size
    double alpha;        // seconds
    double beta;         // seconds per byte
  };
  std::vector<Tier> tiers;  // increasing ranks; the last covers every larger ring

  cost::LinkParams ring(std::int64_t ranks) const;
  // ParaDL's constants for ABCI (its analysis code); for another cluster, its levels.
  static ParadlPlatform forCluster(const hw::Cluster& cluster);
};

struct ParadlEpoch {
  double compute = 0;        // seconds per epoch
  double communication = 0;  // seconds per epoch
  double total() const { return compute + communication; }
};

// Serial, data and data+filter (filter inside the group, data across groups); throws
// ConfigError for the strategies the variant does not cover. `samples` per epoch.
ParadlEpoch paradlEpoch(const ParadlNetwork& network, const ParadlPlatform& platform, const Strategy& strategy,
                        double samples);

}  // namespace paraxis::plan
