#pragma once
// The strategy file: what `paraxis plan --emit` writes and `paraxis train --plan` reads.
// Keys are documented in docs/strategy-json.md.
#include <string>

#include <nlohmann/json.hpp>

#include "plan/estimate.hpp"

namespace paraxis::plan {

// The gradient-communication section of a strategy file (also in train reports).
nlohmann::json gradientCommJson(const GradientComm& settings);
GradientComm gradientCommFromJson(const nlohmann::json& section, const std::string& source);
nlohmann::json strategyJson(const Strategy& strategy);
// Throws ConfigError naming `source` and the key when the document is malformed.
Strategy strategyFromJson(const nlohmann::json& document, const std::string& source);
nlohmann::json estimateJson(const Estimate& estimate);

}  // namespace paraxis::plan
