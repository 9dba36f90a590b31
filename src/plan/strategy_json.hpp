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
// The time breakdown of `plan --json`, `train --json` and `validate --json`: every component,
// then the derived compute, communication and iteration. The reader takes the components back
// (a missing one is 0) and checks each is a finite number >= 0, naming `source` and the key.
nlohmann::json timeBreakdownJson(const TimeBreakdown& time);
TimeBreakdown timeBreakdownFromJson(const nlohmann::json& object, const std::string& source);

}  // namespace paraxis::plan
