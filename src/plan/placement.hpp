#pragma once
// Placing one replica's operations on M identical devices (DLPlacer, Pal et al., IEEE Micro
// 2019): every unit on one device, every operation started after its predecessors finished
// (plus the transfer where they sit on different devices), one operation per device at a time,
// each device's units within its memory, the step's makespan as small as possible.
//
// Three ways to a placement, one checker for all of them:
//  - listSchedule: HEFT-style list scheduling (operations by upward rank, each unit on the
//    device where its forward finishes first, idle gaps filled), any size, no guarantee;
//  - placementIlp (placement_ilp.cpp): the exact integer program through the MILP solver,
//    started from the list schedule, with a time limit and the solver's lower bound;
//  - exhaustivePlacement: every assignment and every order, for small graphs (tests).
#include <string>
#include <vector>

#include "plan/op_graph.hpp"

namespace paraxis::plan {

struct OpPlacement {
  std::vector<int> device;    // per unit, in [0, devices)
  std::vector<double> start;  // per operation, seconds from the step's start
  double makespan = 0;
  double lowerBound = 0;      // no placement of the graph finishes sooner (0: unknown)
  std::string method;         // how it was found: "ilp", "list scheduling", "exhaustive"
  bool optimal = false;       // proven: makespan equals the optimum

  // (makespan - lowerBound) / lowerBound; 0 when optimal, infinity without a bound.
  double gap() const;
};

struct PlacementLimits {
  int devices = 2;
  double memoryPerDevice = 0;  // bytes; 0: no limit
};

// Every violated constraint, one line each, naming the operation, unit or device: empty when
// the placement is feasible and its makespan is its last finish. Independent of how the
// placement was found (tolerance: `slack` seconds, relative to the makespan).
std::vector<std::string> placementViolations(const OpGraph& g, const PlacementLimits& limits, const OpPlacement& p,
                                             double slack = 1e-9);

// max(the longest chain of operations with no transfer, all work spread over the devices).
double makespanLowerBound(const OpGraph& g, int devices);

// The semi-active schedule of an assignment and an operation order (a topological order):
// each operation at the earliest time its inputs have arrived and its device is free after the
// operations before it in `order`. Every feasible schedule is matched or beaten by the one of
// its assignment and its order by start time.
OpPlacement scheduleInOrder(const OpGraph& g, const std::vector<int>& device, const std::vector<int>& order);

// Throws InfeasibleError naming the unit that fits on no device.
OpPlacement listSchedule(const OpGraph& g, const PlacementLimits& limits);

// Exact by enumeration: devices^(units-1) assignments x the topological orders; refuses graphs
// of more than 12 operations (ConfigError).
OpPlacement exhaustivePlacement(const OpGraph& g, const PlacementLimits& limits);

struct IlpOptions {
  double timeLimitSeconds = 10;
  int maxOrderPairs = 20000;  // the program's disjunctions: larger graphs get the list schedule only
};

// The integer program (x: unit on device; s: starts; y: order of each pair of operations that
// no path orders; big-M disjunctions active only when both sit on one device), started from
// `incumbent`; returns the better of the solver's answer and the incumbent, with the solver's
// bound. Throws ConfigError when no solver is built in (saying how to install one).
OpPlacement placementIlp(const OpGraph& g, const PlacementLimits& limits, const OpPlacement& incumbent,
                         const IlpOptions& options);

// A placement by `method`: "list", "ilp" (from the list schedule, `timeLimitSeconds`),
// "exhaustive", or "auto" (the ILP where a solver is built in, else the list schedule, its
// method saying how to install one). ConfigError for another name or "ilp" without a solver.
OpPlacement placeBy(const std::string& method, const OpGraph& g, const PlacementLimits& limits,
                    double timeLimitSeconds);

// The names placeBy takes, for option checks.
bool isPlacementMethod(const std::string& method);

}  // namespace paraxis::plan
