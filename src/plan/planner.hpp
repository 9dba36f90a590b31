#pragma once
// Builds the classic strategies for a GPU count, sweeps GPU counts and ranks the estimates.
#include <cstdint>
#include <string>
#include <vector>

#include "plan/estimator.hpp"

namespace paraxis::plan {

enum class Objective { kTimeToTrain, kIteration, kMemory, kCost };

struct PlanRequest {
  std::vector<std::string> strategies{"data", "data+filter", "data+spatial", "data+pipeline", "filter", "channel",
                                      "spatial", "pipeline"};
  std::vector<int> gpus{8};
  std::int64_t batchPerGpu = 32;  // 0: the largest that fits
  std::int64_t globalBatch = 0;   // when set, the same global batch for every GPU count
  // When set, samples per data replica (a model-parallel group shares them): a hybrid's global
  // batch grows with its replicas, not its GPUs (Pal et al.'s comparison of DP and DP x MP).
  std::int64_t batchPerReplica = 0;
  int modelParallel = 0;  // a hybrid's model-parallel ranks per replica; 0: a node's devices
  int microBatchesPerStage = 4;
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  GradientComm comm;
  Objective objective = Objective::kTimeToTrain;
};

const std::vector<std::string>& strategyNames();

// The strategy on an explicit grid (`plan --grid data=8xfilter=2xh=2`), named by its axes
// (data+filter+spatial); any product of the named axes.
Strategy strategyOnGrid(const Grid& grid, std::int64_t globalBatch, const PlanRequest& request);

// The classic strategy `name` on `gpus` devices: model-parallel axes inside a node for the
// hybrids, spatial grids as square as the GPU count allows. Throws ConfigError for an
// unknown name (listing the known ones).
Strategy makeStrategy(const PlanInputs& inputs, const std::string& name, int gpus, std::int64_t globalBatch,
                      const PlanRequest& request);

// Every strategy x GPU count, feasible or not, best first by the objective (infeasible and
// non-fitting ones last).
std::vector<Estimate> planAll(const PlanInputs& inputs, const PlanRequest& request);

// The largest batch per GPU that fits in memory for this strategy shape (0 if none does).
std::int64_t maxBatchPerGpu(const PlanInputs& inputs, const std::string& name, int gpus, const PlanRequest& request);

// "8..1024" (powers of two), "64", or "8,16,48".
std::vector<int> parseGpuList(const std::string& text);

}  // namespace paraxis::plan
