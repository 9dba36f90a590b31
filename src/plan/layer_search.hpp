#pragma once
// Per-layer distributions (Dryden et al., IPDPS 2019; COST-MODELS.md section 4): each layer
// splits its tensors over sample x depth x height x width in its own way, and moving from one
// distribution to the next costs a shuffle. Minimising the sum of layer and shuffle costs is a
// shortest path through a layered graph, solved by dynamic programming in
// O(layers x candidates^2).
//
// Graphs with joins are walked in topological order as a chain; a join's extra inputs are
// charged the shuffle from the distribution of the join's chain predecessor (an
// approximation: exact on chains).
#include <cstdint>
#include <string>
#include <vector>

#include "plan/inputs.hpp"
#include "plan/strategy.hpp"

namespace paraxis::plan {

struct LayerSearchResult {
  std::vector<Distribution> perLayer;
  std::vector<double> layerSeconds;    // compute + halo + weight-gradient allreduce, per layer
  std::vector<double> shuffleSeconds;  // into each layer from its predecessor
  double totalSeconds = 0;
};

// The distributions a layer admits on p ranks for the global batch; replicated ones only when
// the layer cannot be split p ways.
std::vector<Distribution> layerCandidates(const graph::Layer& layer, int ranks, std::int64_t batch);

// `weightsResident`: the share of the layer's weights a rank keeps in its cache between two uses
// (cost::LocalShare::weightsResident; residentShareOfSearch for the search's ranks).
double layerSeconds(const PlanInputs& inputs, int layer, const Distribution& d, std::int64_t batch,
                    double weightsResident = 0);
// Every rank of a per-layer plan holds the whole model and a 1/ranks share of the batch's
// activations, whatever each layer's split: the share of its weights it keeps in its cache.
double residentShareOfSearch(const PlanInputs& inputs, int ranks, std::int64_t batch);
double shuffleSeconds(const PlanInputs& inputs, double bytesPerSample, const Distribution& from,
                      const Distribution& to, std::int64_t batch);

// Throws InfeasibleError when some layer admits no distribution.
LayerSearchResult searchDistributions(const PlanInputs& inputs, int ranks, std::int64_t batch);
// Every combination, for tests on small models.
LayerSearchResult bruteForceDistributions(const PlanInputs& inputs, int ranks, std::int64_t batch);

}  // namespace paraxis::plan
