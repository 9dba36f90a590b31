#pragma once
// The per-layer report of `paraxis models show`: a table for people, JSON for machines
// (keys documented in docs/json-output.md).
#include <cstdint>
#include <iosfwd>

#include <nlohmann/json.hpp>

#include "graph/model.hpp"

namespace paraxis::cli {

void printModelTable(const graph::Model& model, std::int64_t batch, std::ostream& out);
nlohmann::json modelJson(const graph::Model& model, std::int64_t batch);

}  // namespace paraxis::cli
