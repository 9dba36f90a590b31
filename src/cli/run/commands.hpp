#pragma once
// The commands that need LibTorch or MPI, registered by paraxis-run's Runtime (run/main.cpp).
#include "cli/context.hpp"

namespace paraxis::cli {

void addTrainCommand(CLI::App& app, Context& context);
void addConfigCommand(CLI::App& app, Context& context);
void addBenchCommand(CLI::App& app, Context& context);
void addBenchComputeCommand(CLI::App& bench, Context& context);
void addBenchConvertCommand(CLI::App& bench, Context& context);

}  // namespace paraxis::cli
