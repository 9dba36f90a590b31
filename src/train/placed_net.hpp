#pragma once
// An IR model run as a placement on the ranks of one data replica (DLPlacer, Pal et al., IEEE
// Micro 2019; plan/placement.hpp): each layer on the rank its unit was placed on, every rank
// running its layers in the placement's order, and a tensor sent (non-blocking, tagged with its
// layer) to each other rank that consumes it as soon as it is computed, so independent
// branches run at the same time on different ranks.
//
// Backward runs in segments, one per unit (a chain of layers, as plan::layerGraph forms them):
// the output of a unit's last layer is cut from the local autograd graph (local consumers read
// a detached leaf of it), so each layer's backward runs once, in the segment of its unit. A rank runs
// the ready segment latest in the order first (a unit is ready once the segments of its local
// consumers have run; its gradient is then the leaf's plus each other rank's, in rank order: a
// fixed sum), and sends the gradient of a received tensor the moment its last local consumer's
// segment has run. The latest unfinished unit of the whole replica is always ready on its rank,
// so no rank waits on a gradient that waits on it.
// Every loss layer runs on the rank of the main (last) one; the input layer is on every rank
// (each rank of a replica loads the replica's batch).
#include <torch/torch.h>

#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "train/executor.hpp"
#include "train/ir_module.hpp"

namespace paraxis::train {

struct LayerPlacement {
  std::vector<int> device;  // per layer, its rank in the replica's group
  std::vector<int> order;   // the layers in the placement's order (a topological order)
  // What the schedule predicts for a step, seconds: its makespan and one rank's time for all
  // of it (the layers' sum), for the run to be read against.
  double makespan = 0, oneRank = 0;
  std::string method;  // how the placement was found (rank 0's only)
};

struct PlacementRequest {
  int ranks = 2;
  double samples = 32;                  // per step
  std::vector<double> forward, backward;  // per layer, seconds (empty: as the 'local' preset prices it)
  std::string method = "list";          // plan::placeBy's
  double timeLimit = 10;                // the ILP's, seconds
};

// Each layer's rank for `r.ranks` devices: a placement (plan::placeBy) of the model's units,
// transfers as the 'local' preset prices them; in the order of the schedule's forward starts.
// Rank 0's on every rank of `world` (collective).
LayerPlacement placeLayers(const comm::Communicator& world, const graph::Model& model, const PlacementRequest& r);

class PlacedNet final : public BatchExecutor {
 public:
  // `group`: the ranks of this replica (rank = device). Throws ConfigError when the placement
  // does not fit the model or the group.
  PlacedNet(IrNet net, comm::Communicator group, LayerPlacement placement);

  std::vector<torch::Tensor> run(const torch::Tensor& batch) override;
  torch::Tensor loss(const std::vector<torch::Tensor>& outputs, const torch::Tensor& target) override;
  torch::Tensor prediction(const std::vector<torch::Tensor>& outputs) override { return net_->prediction(outputs); }
  torch::Tensor targetPart(const torch::Tensor& target) override { return target; }
  double replicaLoss(double local) override;
  double share() const override { return 1.0 / group_.size(); }
  std::vector<torch::Tensor> wholeParameters() override;
  bool holdsLayer(int layer) const override { return device_.at(layer) == rank_; }
  bool schedulesMicroBatches() const override { return true; }
  Pass forwardBackward(const torch::Tensor& batch, const torch::Tensor& target, reduce::GradientEngine& engine) override;
  LayerComm layerComm() const override { return comm_; }
  std::string describe() const override;

 private:
  struct Step;  // one batch's tensors, leaves, roots and messages
  // A unit of this rank (a chain of layers, as plan::layerGraph forms them) in backward: from
  // its root (its last layer's output, cut; -1: the loss, every loss chain at once) down to the
  // leaves its first layer reads (received tensors and this rank's cut tensors).
  struct Segment {
    int root = -1;
    std::vector<int> leaves;
  };
  void buildSegments(const std::vector<std::vector<int>>& consumers);
  // Layer `layer`'s output for `batch` in its wire format: kept across training steps.
  torch::Tensor receiveBuffer(int layer, const torch::Tensor& batch, bool training);
  void forward(const torch::Tensor& batch, bool training, Step& s);
  void backward(Step& s);
  void postGradientReceives(Step& s);
  void sendLeafGradient(Step& s, int layer);
  int nextSegment(const Step& s) const;
  void runSegment(Step& s, const Segment& g);
  torch::Tensor arrived(Step& s, int layer, bool training);
  void readInputs(Step& s, int layer, bool training);
  void finishSends(Step& s);

  IrNet net_;
  comm::Communicator group_;
  std::vector<int> device_, order_, position_;  // position_: a layer's place in order_
  int rank_ = 0;
  double makespan_ = 0, oneRank_ = 0;         // the schedule's prediction (LayerPlacement)
  std::string method_;
  int lossLayer_ = -1;                       // the main loss layer
  std::vector<std::vector<int>> remoteUsers_;  // per layer: the other ranks that consume it (ascending)
  std::vector<bool> neededHere_;              // per layer on another rank: this rank consumes it
  std::vector<bool> cut_;                     // per layer: the last of its unit, with a consumer
  std::vector<bool> usedHere_;                // per layer of this rank: a layer of this rank consumes it
  std::vector<Segment> segments_;
  // Receive buffers kept across training steps: per layer of another rank this rank reads, and
  // per cut layer of this rank, one per remote user for its gradient.
  std::vector<torch::Tensor> receiveStore_;
  std::vector<std::vector<torch::Tensor>> gradientStore_;
  double waited_ = 0;
  LayerComm comm_;
};

}  // namespace paraxis::train
