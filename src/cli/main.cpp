// `paraxis`, the planner: plan, place, validate, calibrate, models and clusters run here
// without LibTorch or MPI; train, bench, config and calibrate --quick go to paraxis-run.
#include "cli/entry.hpp"

int main(int argc, char** argv) { return paraxis::cli::commandMain(argc, argv, nullptr); }
