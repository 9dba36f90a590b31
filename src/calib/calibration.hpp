#pragma once
// Holding predictions against measured runs (validate) and fitting the implementation factors
// of a cluster description to them (calibrate). The measured file's format is in
// docs/measured-format.md.
#include <optional>
#include <string>
#include <vector>

#include "hw/cluster.hpp"
#include "plan/estimate.hpp"
#include "plan/inputs.hpp"

namespace paraxis::calib {

using plan::Estimate;
using plan::PlanInputs;
using plan::Strategy;

// Where a train report's run ran (hosts 0: the file does not say).
struct RunMachine {
  std::string device;    // "cpu" or "gpu"; empty: not said
  std::string host;      // rank 0's
  int hosts = 0;
  int ranksPerHost = 0;  // on rank 0's host
  int coresPerHost = 0;
  double speedProbe = 0;  // seconds of calib::kSpeedProbe while it ran (0: not recorded)
  // The time slice its communication threads ran with (core/thread_slice.hpp); unset: not recorded.
  std::optional<double> commThreadSlice;
  // How much slower than the device's speed probe says it ran (0: one of them not measured).
  // Its ranks on a host ran the probe at once: the device's probe is rescaled to that many
  // (hw::CoreSharing; a 1-rank run's probe ran alone).
  double slowdownAgainst(const hw::Device& device) const {
    if (!(speedProbe > 0 && device.speedProbe > 0)) return 0;
    return speedProbe / (device.speedProbe * (ranksPerHost > 0 ? device.sharing.factor(ranksPerHost) : 1.0));
  }
};

struct MeasuredRun {
  std::string label;         // the file's name for the run (defaults to the strategy)
  std::string model;         // the model it ran, when the file says (train reports)
  // How that model was built (train reports): zoo name or file, input extents, channels,
  // classes (0: the model's).
  std::string modelSource, modelInput;
  std::int64_t modelChannels = 0, modelClasses = 0;
  RunMachine machine;        // train reports
  int breakdownRank = 0;     // train reports: the rank whose times the report's breakdown holds
  Strategy strategy;         // shaped as it ran: grid, global batch, overlap
  bool perIteration = false; // times per iteration (train reports) instead of per epoch
  double compute = 0;        // seconds per epoch (or iteration); 0 = not given
  double communication = 0;  // seconds per epoch (or iteration); 0 = not given
  double total = 0;          // seconds per epoch (or iteration)
  int line = 0;              // in the file, for messages
};

// A CSV of runs (docs/measured-format.md), or the JSON report of `paraxis train --json`
// (one run, times per iteration). Throws ConfigError naming the file, line or key at fault.
std::vector<MeasuredRun> readMeasuredRuns(const std::string& path);

struct RunComparison {
  const MeasuredRun* run = nullptr;
  Estimate estimate;
  double compute = 0;        // predicted seconds per epoch (per iteration for a per-iteration run)
  double communication = 0;  // predicted, everything but compute (bubble included)
  double total = 0;
  double error = 0;          // |predicted - measured| / measured, on the total
};

// Throws ConfigError when a run is infeasible for the model and cluster (naming its line), or
// ran another model than the one predicted.
std::vector<RunComparison> compareRuns(const PlanInputs& inputs, const std::vector<MeasuredRun>& runs);
// The same with inputs[i] for runs[i] (runs of different models).
std::vector<RunComparison> compareRuns(const std::vector<PlanInputs>& inputs, const std::vector<MeasuredRun>& runs);
double meanAbsoluteError(const std::vector<RunComparison>& rows);

// What calibrate fits: a factor on each kind of predicted time, or the physical description
// (compute factors, each communication path's alpha and beta per level, the overlap), or that
// description's communication alone (the paths and the overlap; compute as the cluster's device
// gives it, where calibrate --quick measured it across models and sizes).
enum class FitKind { kFactors, kPhysical, kCommunication };

struct ImplementationFit {
  hw::Implementation implementation;    // the fitted factors; those no run exercises stay 1
  std::vector<std::string> fitted;      // the parameters the runs exercise (calib/fit_parameters.hpp keys)
  double errorBefore = 0;               // mean absolute error on the fitting runs, factors at 1
  double errorAfter = 0;                // and with the fitted factors
};

// Least squares on the logarithms of predicted over measured totals, and compute and
// communication where a run gives them and did not overlap the two, with a weak pull of every
// parameter towards its starting figure so that one the runs cannot tell apart from another
// stays near it.
ImplementationFit fitImplementation(const PlanInputs& inputs, const std::vector<MeasuredRun>& runs,
                                    FitKind kind = FitKind::kFactors);
// The same with inputs[i] for runs[i]; every inputs[i].cluster must be the same machine.
ImplementationFit fitImplementation(const std::vector<PlanInputs>& inputs, const std::vector<MeasuredRun>& runs,
                                    FitKind kind = FitKind::kFactors);

}  // namespace paraxis::calib
