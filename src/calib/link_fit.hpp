#pragma once
// A communication path's effective alpha and beta on each network level, fitted to timed
// calls (`paraxis calibrate --quick`): the topology model of cost/topology.hpp, inverted.
#include <string>
#include <vector>

#include "cost/topology.hpp"
#include "hw/cluster.hpp"

namespace paraxis::calib {

enum class LinkOperation { kPointToPoint, kAllreduce, kAllgather };

// One timed call: the path it stands for, what ran on which ranks, and how long it took.
struct LinkSample {
  hw::CommPath path = hw::CommPath::kPointToPoint;
  LinkOperation operation = LinkOperation::kPointToPoint;
  cost::Placement group;  // ranks [0, size) spaced `stride` apart; a message's two ends for p2p
  double bytes = 0;       // the message, the allreduced vector, or the gathered total
  double seconds = 0;     // the slowest rank's, median of trials
};

struct PathLinkFit {
  hw::CommPath path = hw::CommPath::kPointToPoint;
  hw::PathLink link;        // the fitted figures
  std::vector<LinkSample> samples;  // the calls fitted, measured
  std::vector<double> fitted;       // what the fitted figures predict for each
  double meanError = 0;             // mean |fitted - measured| / measured
};

// What the topology model predicts for the sample on `cluster` (congestion as described).
double predictSample(const hw::Cluster& cluster, const LinkSample& sample);

// Fits alpha and beta of every (path, level) the samples reach, the level being the outermost
// one a sample's group spans; inner levels first, so that a group crossing an outer level is
// predicted with the inner figures already fitted. Least squares on log(predicted/measured),
// each figure searched as a multiple of the level's own. The fitted figures are added to
// `cluster.implementation.paths` (replacing any there for the same path and level).
std::vector<PathLinkFit> fitPathLinks(hw::Cluster& cluster, const std::vector<LinkSample>& samples);

}  // namespace paraxis::calib
