#pragma once
// One replica's training step as a graph of operations to place on devices (DLPlacer, Pal et
// al., IEEE Micro 2019): per placement unit a forward and a backward operation, edges that
// carry activations forward and their gradients backward, each operation with the seconds the
// cost model gives it on one device and each edge with the seconds its tensor takes between
// two devices. A unit's forward and backward share a device (the backward needs the
// activations and weights the forward kept), so what is placed is a unit; a unit is a chain
// of layers (a layer with one input whose producer feeds it alone joins the producer's unit:
// splitting a chain can only add a transfer, never run anything at the same time).
#include <functional>
#include <string>
#include <vector>

#include "graph/model.hpp"
#include "hw/cluster.hpp"

namespace paraxis::plan {

struct OpNode {
  std::string name;    // "fwd conv1" / "bwd conv1" (the unit's first layer)
  double seconds = 0;  // on one device
  int unit = 0;
};

struct OpEdge {
  int from = 0, to = 0;  // operations
  double bytes = 0;      // 0 between a unit's own forward and backward
  double seconds = 0;    // the transfer when the two units sit on different devices
};

struct OpGraph {
  std::vector<OpNode> ops;  // in a topological order
  std::vector<OpEdge> edges;
  std::vector<std::string> unitNames;          // first layer .. last layer
  std::vector<std::vector<int>> unitLayers;    // the model's layers of each unit
  std::vector<double> unitBytes;               // what a unit holds on its device
  // Transfers copied by the receiving device's cores (hw::Device::receivesByCopy): an edge
  // between devices then occupies its consumer's device for its seconds, instead of delaying it.
  bool receiverCopies = false;

  int units() const { return static_cast<int>(unitNames.size()); }
  int size() const { return static_cast<int>(ops.size()); }
  double totalSeconds() const;
  // The seconds operation `op` occupies its device, its units placed on `unitDevice`.
  double busySeconds(int op, const std::vector<int>& inEdges, const std::vector<int>& unitDevice) const;
  // When edge `e`'s tensor is on its consumer's device, its producer finished at `finish`.
  double arrival(int e, double finish, const std::vector<int>& unitDevice) const;
  // Per operation: the edges that leave it / enter it (indices into `edges`).
  std::vector<std::vector<int>> outEdges() const;
  std::vector<std::vector<int>> inEdges() const;
  // reaches[i][j]: a path of edges leads from operation i to j (i != j).
  std::vector<std::vector<bool>> reachability() const;
};

// What one replica runs: `samples` per step, fp32, on the cluster's device; transfers priced as
// one point-to-point message between two devices of a node. A unit holds its weights, their
// gradients and `optimizerStatesPerWeight` optimizer states, and the activations its layers keep.
// `ranks`: the job's ranks, whose node's share of the cores sets the layers' pace
// (Cluster::sharingFactor, Cluster::timeSharingAt), as in the oracle's estimate; `devices`: the
// devices the replica is placed on, each computing its share of a pass between two waits.
OpGraph trainingGraph(const graph::Model& model, const hw::Cluster& cluster, double samples,
                      std::int64_t ranks, int devices, double optimizerStatesPerWeight = 1);

// The same from per-layer seconds already priced (the oracle's): `forward[i]` and `backward[i]`
// of layer i for `samples`, and `transfer(bytes)`, the seconds a tensor takes between devices.
OpGraph layerGraph(const graph::Model& model, const std::vector<double>& forward, const std::vector<double>& backward,
                   double samples, const std::function<double(double)>& transfer, double optimizerStatesPerWeight = 1);

// For tests and small examples: a graph from explicit operations, edges and unit memory, with
// each unit's forward and backward given as one operation each (units = ops).
OpGraph explicitGraph(const std::vector<double>& seconds, const std::vector<OpEdge>& edges,
                      const std::vector<double>& unitBytes);

}  // namespace paraxis::plan
