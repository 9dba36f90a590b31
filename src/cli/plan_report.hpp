#pragma once
// How `paraxis plan` shows its estimates: a ranked table, CSV, and an explanation of one row.
#include <iosfwd>
#include <string>
#include <vector>

#include "plan/estimate.hpp"
#include "plan/inputs.hpp"
#include "plan/layer_search.hpp"

namespace paraxis::cli {

void printPlanTable(const graph::Model& model, const hw::Cluster& cluster, const plan::PlanInputs& inputs,
                    const std::vector<plan::Estimate>& estimates, std::ostream& out);
void printPlanCsv(const std::vector<plan::Estimate>& estimates, std::ostream& out);
// Every term of `estimate`, then `layers` (Oracle::layerTimes of its strategy; none: no table)
// by layer.
void printExplanation(const plan::PlanInputs& inputs, const plan::Estimate& estimate,
                      const std::vector<plan::LayerTime>& layers, std::ostream& out);
void printLayerSearch(const graph::Model& model, const plan::LayerSearchResult& result, int gpus,
                      std::int64_t batch, std::ostream& out);
void printParadlTable(const std::vector<std::vector<std::string>>& rows, std::ostream& out);

}  // namespace paraxis::cli
