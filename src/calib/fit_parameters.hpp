#pragma once
// The free parameters of calibrate's fit to measured runs, each a multiple (`scale`) of a
// starting figure of the cluster: the implementation factors (kFactors: a factor on each kind
// of predicted time), or the physical description (kPhysical: the compute factors, each
// communication path's alpha and beta per network level, and the overlap's hidden rate and
// compute slowdown). Only what some run exercises is free.
#include <string>
#include <string_view>
#include <vector>

#include "calib/calibration.hpp"
#include "hw/cluster.hpp"

namespace paraxis::calib {

struct FitParameter {
  std::string key;     // as reported: "halo", "paths.gradient_allreduce.rack.beta", "overlap.hidden"
  double* value;       // inside the cluster being fitted
  double base;         // the starting figure
  double low, high;    // the physical range of the value
  double scale = 1;    // what the fit moves: value = base x scale, within [low, high]
  void apply() const;
};

// Why implementation factor `f` stays at 1 when a fit of `kind` leaves it out of the fitted
// parameters, as calibrate prints it: no run exercises it, the paths carry it (the physical and
// communication fits), or compute stays as the device gives it (the communication fit).
std::string_view whyUnfitted(FitKind kind, const hw::ImplementationFactor& f);

// Points into `cluster` (adding the path entries the physical parameters need first): keep the
// cluster alive and its paths unchanged while the parameters are used.
std::vector<FitParameter> fitParameters(hw::Cluster& cluster, const std::vector<MeasuredRun>& runs, FitKind kind);

}  // namespace paraxis::calib
