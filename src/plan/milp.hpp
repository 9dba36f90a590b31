#pragma once
// A mixed-integer linear program and the solver behind it: the placement's integer program is
// written against this (plan/placement_ilp.cpp), the solver is one backend file (GLPK, Debian's
// libglpk-dev, in milp_glpk.cpp; milp_none.cpp where the build found none), so another solver
// (CBC, HiGHS) is one more file.
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace paraxis::plan {

struct Milp {
  static constexpr double kInfinity = std::numeric_limits<double>::infinity();
  struct Variable {
    double lower = 0, upper = kInfinity;
    double objective = 0;  // minimised
    bool integer = false;
  };
  struct Row {  // lower <= sum of coefficient x variable <= upper (either side may be infinite)
    std::vector<std::pair<int, double>> terms;
    double lower = -kInfinity, upper = kInfinity;
  };
  std::vector<Variable> variables;
  std::vector<Row> rows;

  int add(const Variable& v) {
    variables.push_back(v);
    return static_cast<int>(variables.size()) - 1;
  }
  void atLeast(std::vector<std::pair<int, double>> terms, double lower) { rows.push_back({std::move(terms), lower, kInfinity}); }
  void atMost(std::vector<std::pair<int, double>> terms, double upper) { rows.push_back({std::move(terms), -kInfinity, upper}); }
  void equal(std::vector<std::pair<int, double>> terms, double value) { rows.push_back({std::move(terms), value, value}); }
};

struct MilpResult {
  enum class Status { kOptimal, kFeasible, kInfeasible, kNoSolution };  // kFeasible: stopped at the time limit
  Status status = Status::kNoSolution;
  std::vector<double> values;  // per variable, when a solution was found
  double objective = 0;
  double bound = 0;            // no solution is better than this (the best open node's bound)
};

// The solver this build has ("GLPK 5.0"), or empty when it has none.
std::string milpSolverName();

// Throws ConfigError when the build has no solver (naming the package to install), Error when
// the solver fails. `start`: a feasible solution to begin from (empty: none).
MilpResult solveMilp(const Milp& program, const std::vector<double>& start, double timeLimitSeconds);

}  // namespace paraxis::plan
