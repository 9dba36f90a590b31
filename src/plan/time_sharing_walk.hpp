#pragma once
// The oracle's walk of a step as the ranks compute it, where they time-share the cores
// (hw::TimeSharing; internal to plan): each span of compute between two blocking
// synchronisations takes the curve's factor at its length. A layer's halo exchange or
// collectives end a span, and under forward priority the forward's await of each gradient
// group. A step without them is one span (a data-parallel step's whole pass: the gradient
// reduction runs beside it); a split layer's pass is one of its own; a pipeline's or
// placement's stage computes its share of the model's forward, then of its backward, per
// micro-batch. docs/validation-log.md, sessions 50-51, holds the netns sittings' figures and
// what was tried and not kept.
#include <vector>

#include "core/gradient_comm.hpp"
#include "cost/compute.hpp"
#include "hw/cluster.hpp"
#include "plan/evaluation.hpp"

namespace paraxis::plan::detail {

// Under forward priority the next forward awaits each gradient group's reduction before the
// group's first layer (the groups as the gradient schedule forms them: over each layer's local
// gradient bytes, a split layer's share of its weights, in backward order). Marks those layers
// in `a.awaitedAt` and returns the first (0: none). The ranks leave an await at different
// moments, as the reductions finish on each, so a rank's next layers run while others still
// wait: each await ends a span (n58's traces: lenet data=4's forward at its CPU time, 3.6-4.1
// ms, where the whole step's stretch put 7.2 ms). The walk runs before the gradient schedule
// and cannot tell an await that costs nothing (reductions ended before the forward reaches the
// group, the ranks computing on together) from one that does: it ends a span at every group.
int markGroupAwaits(const std::vector<cost::LayerProfile>& profiles, const GradientComm& comm,
                    LayerArrays& a);
// No await marked (a pipeline's stages, or no reduction beside the next forward): returns 0.
int noGroupAwaits(LayerArrays& a, int layers);

// Stretches `a`'s forward and backward times (a staged rank's at `stageShare` of the layers per
// span) and returns the update's factor: the update joins the span it starts, the step's first
// or, a group's update running after its await, the one from `firstAwaited` on.
double stretchSpans(const hw::TimeSharing& sharing, bool staged, double stageShare, int firstAwaited,
                    LayerArrays& a);

}  // namespace paraxis::plan::detail
