#pragma once
// main() of both executables: parses the command line, runs the command, maps errors to exit
// codes (entry.cpp). `runtime` is null in the planner (runtime.hpp).
namespace paraxis::cli {

class Runtime;

int commandMain(int argc, char** argv, const Runtime* runtime);

}  // namespace paraxis::cli
