#pragma once
// A parallel strategy: a process grid with named axes, the batch, pipeline settings and the
// communication options. Plain data: `plan --emit` writes it as JSON (docs/strategy-json.md)
// and `train --plan` reads it back.
#include <cstdint>
#include <string>
#include <vector>

#include "core/gradient_comm.hpp"

namespace paraxis::plan {

// Ranks are laid out data (outermost), pipeline, place, channel, filter, spatial-d, -h, -w
// (innermost), so model-parallel axes share a node first.
struct Grid {
  int data = 1;
  int pipeline = 1;
  // A replica's operations placed on `place` devices (plan/placement.hpp, DLPlacer): each unit
  // of layers whole on one device, independent branches at the same time. With data only.
  int place = 1;
  int channel = 1;
  int filter = 1;
  int depth = 1;
  int height = 1;
  int width = 1;
  // A spatial grid's head (the layers from its split point on, which need whole samples):
  // false, sample-parallel over the spatial ranks (Dryden's "sample late"); true, the whole
  // batch on every spatial rank with the weights split by the filter axis's rule over them
  // (plan/layer_split.hpp), as LBANN runs model-parallel heads. Written "head=filter".
  bool filterHead = false;

  int spatial() const { return depth * height * width; }
  int modelParallel() const { return pipeline * place * channel * filter * spatial(); }
  int total() const { return data * modelParallel(); }
  // A replica's layers run on different ranks (pipeline stages, placed devices), which then
  // compute different work and wait on each other.
  bool ranksRunDifferentLayers() const { return pipeline > 1 || place > 1; }
  // Distance between neighbouring ranks along each axis.
  std::int64_t strideWidth() const { return 1; }
  std::int64_t strideHeight() const { return width; }
  std::int64_t strideDepth() const { return static_cast<std::int64_t>(width) * height; }
  std::int64_t strideFilter() const { return spatial(); }
  std::int64_t strideChannel() const { return static_cast<std::int64_t>(spatial()) * filter; }
  std::int64_t stridePlace() const { return strideChannel() * channel; }
  std::int64_t stridePipeline() const { return stridePlace() * place; }
  std::int64_t strideData() const { return stridePipeline() * pipeline; }
  std::string str() const;  // "data=16xfilter=4"
};

// The inverse of Grid::str(): "data=8xh=4" (axes data, pipeline, channel, filter, d, h, w;
// absent axes are 1; "xhead=filter" for a filter-parallel head). Throws ConfigError naming the
// part it cannot read.
Grid parseGrid(const std::string& text);
// Why `grid`'s head setting cannot apply (a filter head needs a spatial axis to split over and
// no filter, channel or pipeline axis); empty when it can.
std::string headProblem(const Grid& grid);

enum class PipelineSchedule { kGPipe, kOneFOneB };

// One layer's distribution in a per-layer plan (layer_search.hpp): its output split over
// samples x depth x height x width, each block computed by `replicas` ranks.
struct Distribution {
  int sample = 1;
  int depth = 1;
  int height = 1;
  int width = 1;
  int replicas = 1;  // ranks computing the same block redundantly (layers too small to split)

  int ranks() const { return sample * depth * height * width * replicas; }
  int spatial() const { return depth * height * width; }
  std::string str() const;  // "n2xd1xh1xw2", "...xr2" with replicas
  bool operator==(const Distribution&) const = default;
};

struct LayerDistribution {
  std::string layer;  // the IR layer's name, checked against the model that runs the plan
  Distribution distribution;
};

struct Strategy {
  std::string name;  // "data", "data+filter", ...
  Grid grid;
  std::int64_t globalBatch = 0;
  int microBatches = 1;  // pipeline only
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  GradientComm comm;
  // A per-layer plan (plan --per-layer --emit): every IR layer's distribution, in model order;
  // empty for the uniform strategies, whose grid says it all.
  std::vector<LayerDistribution> layers;
};

std::string scheduleName(PipelineSchedule s);
// A grid's strategy name: its axes above 1 joined by '+' ("data+spatial"), or "serial".
std::string strategyNameOf(const Grid& grid);

}  // namespace paraxis::plan
