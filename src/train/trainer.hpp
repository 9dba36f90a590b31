#pragma once
// The training loop behind `paraxis train`: data-parallel over the communicator, or over a
// grid of data replicas x a model-parallel group per replica (spatial blocks and filter or
// channel slices: spatial_net.hpp; pipeline stages: pipeline_net.hpp), with the gradient
// engine over the ranks holding the same weights, SGD with momentum, warm-up and a step or cosine schedule, a test split
// evaluated at every epoch end, progress on rank 0, and the measured breakdown in the
// oracle's vocabulary. Torch stays in trainer.cpp.
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "core/compute_device.hpp"
#include "graph/model.hpp"
#include "plan/estimate.hpp"
#include "plan/strategy.hpp"

namespace paraxis::train {

struct TrainOptions {
  std::string data = "synthetic";  // synthetic, fashion-mnist, or a directory of IDX files
  std::int64_t syntheticSamples = 0;  // 0: defaultSyntheticSamples of the model's input
  std::int64_t batchPerRank = 32;  // per data replica (a spatial group shares its replica's)
  // The grid (data outermost, then pipeline, place, channel, filter, d, h, w: plan::Grid's order);
  // none: every rank a data replica.
  std::optional<plan::Grid> grid;
  // A spatial grid's layers from this IR layer on run on whole samples (a per-layer plan's
  // switch, planExecution); 0: from the first layer that needs whole samples.
  int sampleFrom = 0;
  std::vector<std::vector<int>> layerGrids;  // a per-layer plan's spatial grid of each layer (empty: the grid's)
  bool haloOverlap = false;  // compute a block's interior while its halos travel (halo_conv.hpp)
  bool localBatchNorm = false;  // spatial grids: batch-norm statistics of each block alone
  // Pipeline grids: micro-batches per replica batch (0: the largest divisor of the batch up to
  // 4 per stage) and the schedule.
  int microBatches = 0;
  plan::PipelineSchedule schedule = plan::PipelineSchedule::kOneFOneB;
  // The cluster (preset or file) on whose device the stages are balanced: the run's --cluster,
  // so that train cuts the stages where plan and validate, on that cluster, price them.
  std::string stageCluster = "local";
  // Placement grids: each IR layer's measured seconds for one step of batchPerRank samples,
  // forward and backward, which the placement schedules (empty: the 'local' preset's model).
  std::vector<double> layerForwardSeconds, layerBackwardSeconds;
  // How the placement is found (plan::placeBy's methods) and the ILP's time limit, seconds.
  std::string placementMethod = "list";
  double placementTimeLimit = 10;
  int epochs = 1;
  std::int64_t iterations = 0;     // > 0: stop after this many (overrides epochs)
  double learningRate = 0.01;      // for one rank at batchPerRank; scaled by ranks unless disabled
  bool scaleLearningRate = true;
  double momentum = 0.9;
  bool nesterov = false;
  double weightDecay = 0;
  bool skipNonFinite = false;  // skip updates with nan/inf gradients instead of stopping the run
  double warmupEpochs = 0;
  std::string lrSchedule = "constant";  // constant, step, cosine
  int threads = 0;
  ComputeDevice device;  // where the model, data and gradient buffers live (cuda: the data axis only)
  std::uint64_t seed = 1;
  // The gradient engine, in the strategy file's vocabulary (a plan's settings apply as they are).
  GradientComm comm;
  double sparseWarmupEpochs = 1;
  bool quiet = false;
  double progressInterval = 10;  // seconds between progress lines when they cannot redraw one
  std::string checkpointDir;        // write checkpoints here
  std::int64_t checkpointEvery = 0;  // iterations between checkpoints
  std::string resumeDir;            // continue from the latest checkpoint here
  std::string weightsOut;           // rank 0 writes the final parameters (raw f32) here
  std::string trace;                // rank 0 writes every rank's timeline here (Chrome trace events); trace::enable() first
  // "option=value" lines a checkpoint records and a resume must match (cli's run configuration).
  std::string configuration;
};

struct EpochReport {
  int epoch = 0;
  double trainLoss = 0;
  double testLoss = 0;
  std::optional<double> testAccuracy;  // none for a regression model
  double seconds = 0;
};

// The micro-batches of a pipeline grid's replica: as asked, or the largest divisor of the batch
// up to 4 per stage.
int microBatchesOf(const TrainOptions& o, const plan::Grid& g);

struct TrainReport {
  int ranks = 1;
  plan::Grid grid;  // what ran
  std::string layout;  // for a distributed grid: how the replica is laid out over its ranks
  int microBatches = 1;  // pipelines: per replica batch
  int threads = 1;
  std::int64_t iterations = 0;
  std::int64_t measuredIterations = 0;  // past the warm-up iterations, which the figures leave out
  std::int64_t globalBatch = 0;
  double seconds = 0;           // wall time of the run, evaluations included
  double trainingSeconds = 0;   // the measured iterations only
  double samplesPerSecond = 0;  // over the measured iterations
  // The most bytes LibTorch's allocator held at once during a measured step (activations,
  // gradients, workspaces), on the rank that held the most.
  std::int64_t peakStepBytes = 0;
  // Per measured iteration, averaged, in the oracle's breakdown: forward, the backward pass
  // (whole, in backwardData), update, gradient reduction total and exposed, data loading.
  plan::TimeBreakdown time;
  // The rank whose figures `time` holds: 0, or where ranks compute different layers (pipeline
  // stages, placed devices) the busiest, as the oracle's breakdown is its slowest stage's.
  int breakdownRank = 0;
  std::vector<double> rankBusy;  // per rank, plan::TimeBreakdown::busy per measured iteration
  std::vector<EpochReport> epochs;
  std::string allreduceAlgorithm = "none";  // the gradient engine's, for its largest group
};

// How train runs a per-layer plan (plan --per-layer --emit): each layer keeps the first
// layer's samples split (the data axis) and a spatial split over the same number of ranks,
// its grid free to change from layer to layer (the tensor is regridded there), up to the
// first layer that splits differently; from there on whole samples. ConfigError naming the
// first layer it cannot run that way, or a layer list that does not match the model.
struct PlanExecution {
  int sampleFrom = 0;                         // the switch to whole samples (the model's size: none)
  std::vector<std::vector<int>> layerGrids;  // per layer: its spatial grid (d, h, w or h, w)
};
PlanExecution planExecution(const std::vector<plan::LayerDistribution>& layers, const graph::Model& model);

// `grid` if train can run it on `ranks` ranks for `model`; ConfigError naming what it cannot.
plan::Grid checkGrid(const plan::Grid& grid, int ranks, const graph::Model& model);

TrainReport runTraining(const comm::Communicator& comm, const graph::Model& model, const TrainOptions& options,
                        std::ostream& progress);

}  // namespace paraxis::train
