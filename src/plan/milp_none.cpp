// The MILP backend of a build without a solver: placement falls back to list scheduling, and
// asking for the exact program says what to install.
#include "core/error.hpp"
#include "plan/milp.hpp"

namespace paraxis::plan {

std::string milpSolverName() { return {}; }

MilpResult solveMilp(const Milp&, const std::vector<double>&, double) {
  throw ConfigError("the exact placement needs an ILP solver, and this build has none: install GLPK "
                    "(apt-get install libglpk-dev, which `make setup` does) and rebuild");
}

}  // namespace paraxis::plan
