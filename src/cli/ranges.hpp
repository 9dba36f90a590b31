#pragma once
// Domains of numeric options. The value must read as a finite number (nan and inf are refused
// too) inside the range; the error says so in words, "--lr: must be in (0, 100], found 'nan'",
// instead of CLI11's 309-digit bound.
#include <CLI/CLI.hpp>

namespace paraxis::cli {

CLI::Validator positive();                          // > 0
CLI::Validator nonNegative();                       // >= 0
CLI::Validator within(double low, double high);     // [low, high]
CLI::Validator aboveUpTo(double low, double high);  // (low, high]
CLI::Validator fraction();                          // [0, 1)

}  // namespace paraxis::cli
