#pragma once
// validate --trace: one run's layers as its trace measured them against the oracle's layer
// times for the strategy it ran, in the model's order: where a prediction's error comes from.
#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <vector>

#include "calib/calibration.hpp"
#include "calib/gradient_trace.hpp"
#include "calib/layer_trace.hpp"
#include "plan/estimate.hpp"
#include "plan/inputs.hpp"

namespace paraxis::cli {

struct LayerComparison {
  std::string layer;
  std::string kind;  // graph::kindName of the layer
  calib::MeasuredLayer measured;  // forwardCalls 0: the trace did not time it
  plan::LayerTime predicted;
  // Predicted less measured over what both give (compute both ways and communication; the
  // forward and communication alone where the trace has no backward by layer, as a pipeline's).
  double off() const;
};

// Throws ConfigError naming `tracePath` when none of its layers is in the run's model.
std::vector<LayerComparison> compareLayers(const plan::PlanInputs& in, const calib::MeasuredRun& run,
                                           const calib::RankTraces& trace, const std::string& tracePath);

void printLayerComparison(const std::vector<LayerComparison>& rows, const std::string& tracePath,
                          std::ostream& out);
nlohmann::json layerComparisonJson(const std::vector<LayerComparison>& rows);

// The layers of one kind summed, over what the trace times of each: where a kind's error is
// systematic (every batch norm short, every convolution long) rather than one layer's.
struct KindSum {
  std::string kind;
  int layers = 0;
  double measuredForward = 0, predictedForward = 0;    // the layers with a traced forward
  double measuredBackward = 0, predictedBackward = 0;  // the layers with a backward of their own
  double off = 0;                                      // LayerComparison::off summed
};
// By the size of their `off`, the largest first.
std::vector<KindSum> sumByKind(const std::vector<LayerComparison>& rows);
void printKindSums(const std::vector<KindSum>& kinds, std::ostream& out);
nlohmann::json kindSumsJson(const std::vector<KindSum>& kinds);

// The run's exposed gradient time as its trace took it apart (calib/gradient_trace.hpp) against
// the oracle's parts of it (under forward priority its reductions' own time and group waits
// stand against the forward's waits, under fifo against the waits after backward; its ranks'
// drift against the closing agreement, after backward); nothing where the trace has no reduction.
void printExposedGradient(const calib::ExposedGradient& measured, const plan::ExposedGradientParts& predicted,
                          std::ostream& out);
nlohmann::json exposedGradientJson(const calib::ExposedGradient& measured,
                                   const plan::ExposedGradientParts& predicted);

}  // namespace paraxis::cli
