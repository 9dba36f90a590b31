#include "parallel/spatial_layers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "comm/allreduce.hpp"
#include "core/error.hpp"

namespace paraxis::parallel {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// An allreduce over the spatial group, its time counted as a layer collective.
void groupAllreduce(const comm::Communicator& comm, void* data, std::size_t count, comm::DataType type) {
  const auto start = std::chrono::steady_clock::now();
  comm::allreduce(comm, data, data, count, type);
  addCommTime(CommKind::kCollective, start, static_cast<std::int64_t>(count * comm::elementSize(type)));
}

// Rank q's share of whole samples of a [N, ...] tensor (or `samples` instead of its share).
Box samplesBox(const SpatialSplit& split, int q, const std::vector<std::int64_t>& shape,
               std::optional<Range> samples = std::nullopt) {
  Box box{samples ? *samples : sampleRange(split, q, shape[0])};
  for (std::size_t d = 1; d < shape.size(); ++d) box.push_back({0, shape[d]});
  return box;
}

// Spatial blocks -> whole samples: sampleRange's share of them, or (`all`) every one.
torch::Tensor blocksToSamples(const SpatialSplit& split, const torch::Tensor& x, const std::vector<std::int64_t>& extents,
                              bool all) {
  std::vector<std::int64_t> shape{x.size(0), x.size(1)};
  shape.insert(shape.end(), extents.begin(), extents.end());
  Placement p{shape, {}, {}, 0.0, CommKind::kShuffle};
  for (int q = 0; q < split.comm.size(); ++q) {
    p.owned.push_back(split.blockBox(q, shape));
    p.needed.push_back(all ? samplesBox(split, q, shape, Range{0, shape[0]}) : samplesBox(split, q, shape));
  }
  return redistribute(split.comm, x, p);
}

// Shapes a per-channel [C] vector to broadcast against [N, C, spatial...].
torch::Tensor perChannel(const torch::Tensor& v, const torch::Tensor& like) {
  std::vector<std::int64_t> shape(like.dim(), 1);
  shape[1] = v.size(0);
  return v.view(shape);
}

// Whether a tensor's values can be read and written in place on the host: contiguous f32 or
// f64 in this process's memory.
bool onHost(const torch::Tensor& t) {
  return t.device().is_cpu() && t.is_contiguous() &&
         (t.scalar_type() == torch::kFloat32 || t.scalar_type() == torch::kFloat64);
}

// Per-channel values as host doubles, row after row. The group statistics' arithmetic runs on
// these: a torch op on a few hundred values costs ~5-10 us here, and a split batch norm ran ~15
// of them a pass (4.4 ms a step on resnet18 64² at h=2, where its memory traffic takes 0.7 ms).
// Host rows are read in place, the rest through one stack: with the running statistics blended
// on the host too, its 20 batch norms went 2.2 -> 1.4 ms forward and 2.5 -> 1.9 ms backward a
// step (three alternated pairs of traced runs, 2026-12-07).
std::vector<double> hostDoubles(const std::vector<torch::Tensor>& rows) {
  if (std::all_of(rows.begin(), rows.end(), onHost)) {
    std::vector<double> values;
    for (const torch::Tensor& row : rows) {
      if (row.scalar_type() == torch::kFloat64) {
        values.insert(values.end(), row.data_ptr<double>(), row.data_ptr<double>() + row.numel());
      } else {
        values.insert(values.end(), row.data_ptr<float>(), row.data_ptr<float>() + row.numel());
      }
    }
    return values;
  }
  const torch::Tensor t = torch::stack(rows).to(torch::kFloat64).contiguous();
  const double* p = t.data_ptr<double>();
  return {p, p + t.numel()};
}

// `values` as `rows` per-channel tensors of `type` on the host (a copy: the vector may go).
torch::Tensor channelRows(std::vector<double>& values, std::int64_t rows, c10::ScalarType type) {
  const auto channels = static_cast<std::int64_t>(values.size()) / rows;
  if (type == torch::kFloat32) {
    torch::Tensor t = torch::empty({rows, channels}, torch::kFloat32);
    std::copy(values.begin(), values.end(), t.data_ptr<float>());
    return t;
  }
  return torch::from_blob(values.data(), {rows, channels}, torch::kFloat64).to(type, false, /*copy=*/true);
}

// running = (1 - momentum) running + momentum update, per channel; `update` in doubles.
void blendRunning(torch::Tensor& running, const double* update, double momentum) {
  if (running.scalar_type() == torch::kFloat32 && onHost(running)) {
    float* r = running.data_ptr<float>();
    for (std::int64_t i = 0; i < running.numel(); ++i) {
      r[i] = static_cast<float>((1 - momentum) * r[i] + momentum * update[i]);
    }
    return;
  }
  const auto c = static_cast<std::size_t>(running.numel());
  std::vector<double> values(update, update + c);
  running.mul_(1 - momentum)
      .add_(channelRows(values, 1, running.scalar_type())[0].to(running.device()), momentum);
}

// Batch norm over the group's statistics on torch's fused kernels: the block's statistics, the
// group's sums of them, then torch's batch norm at those statistics (its evaluation-mode
// kernel); backward is torch's evaluation-mode backward (the gradient at fixed statistics, and
// the weight's and bias's local sums) corrected by the statistics' own gradient from the
// group's sums. Element by element the ops of the textbook formula took 2-6x torch's own batch
// norm on one thread.
class BatchNormFunction : public torch::autograd::Function<BatchNormFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& weight,
                               const torch::Tensor& bias, const SpatialSplit* split, torch::Tensor runningMean,
                               torch::Tensor runningVar, double momentum, double eps) {
    // The block's mean and variance in one pass of torch's statistics kernel (the sum and the
    // sum of squares took 2.7x as long, squaring into a temporary); the group's sums of x, x^2
    // and the count from them, in f64.
    const std::int64_t channels = x.size(1);
    const auto c = static_cast<std::size_t>(channels);
    const double local = static_cast<double>(x.numel() / channels);
    const auto [blockMean, blockVar] = at::batch_norm_update_stats(x, {}, {}, 0.0);
    const std::vector<double> block = hostDoubles({blockMean, blockVar});
    std::vector<double> sums(3 * c);
    for (std::size_t i = 0; i < c; ++i) {
      sums[i] = block[i] * local;
      sums[c + i] = (block[c + i] + block[i] * block[i]) * local;
      sums[2 * c + i] = local;
    }
    groupAllreduce(split->comm, sums.data(), sums.size(), comm::DataType::kF64);
    const double n = sums[2 * c];
    std::vector<double> stats(2 * c);  // the group's mean and (biased) variance
    for (std::size_t i = 0; i < c; ++i) {
      stats[i] = sums[i] / n;
      stats[c + i] = std::max(0.0, sums[c + i] / n - stats[i] * stats[i]);
    }
    const torch::Tensor group = channelRows(stats, 2, x.scalar_type());
    const torch::Tensor groupMean = group[0], groupVar = group[1];
    if (runningMean.defined()) {
      torch::NoGradGuard noGrad;
      std::vector<double> unbiased(stats.begin() + static_cast<std::ptrdiff_t>(c), stats.end());
      for (double& v : unbiased) v *= n / std::max(1.0, n - 1);
      blendRunning(runningMean, stats.data(), momentum);
      blendRunning(runningVar, unbiased.data(), momentum);
    }
    ctx->save_for_backward({x, weight, groupMean, groupVar});
    ctx->saved_data["split"] = reinterpret_cast<std::int64_t>(split);
    ctx->saved_data["n"] = n;
    ctx->saved_data["eps"] = eps;
    return torch::batch_norm(x, weight, bias, groupMean, groupVar, /*training=*/false, 0.0, eps, false);
  }

  // dx = w invstd (dy - sum(dy)/n - xhat sum(dy xhat)/n) over the group's sums: torch's
  // gradient at fixed statistics (the first term) less a + b x per channel.
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const torch::Tensor &x = saved[0], &weight = saved[1], &mean = saved[2], &var = saved[3];
    const auto* split = reinterpret_cast<const SpatialSplit*>(ctx->saved_data["split"].toInt());
    const double n = ctx->saved_data["n"].toDouble();
    const double eps = ctx->saved_data["eps"].toDouble();
    const torch::Tensor dy = grads[0].contiguous(x.suggest_memory_format());
    auto [dx, localWeight, localBias] =
        at::native_batch_norm_backward(dy, x, weight, mean, var, {}, {}, /*train=*/false, eps, {true, true, true});
    std::vector<double> sums = hostDoubles({localBias, localWeight});  // of dy, of dy xhat
    groupAllreduce(split->comm, sums.data(), sums.size(), comm::DataType::kF64);
    const std::vector<double> wmv = hostDoubles({weight, mean, var});
    const std::size_t c = wmv.size() / 3;
    std::vector<double> minus(2 * c);  // -b, -a
    for (std::size_t i = 0; i < c; ++i) {
      const double invStd = 1 / std::sqrt(wmv[2 * c + i] + eps);
      const double scale = wmv[i] * invStd / n;
      minus[i] = -scale * sums[c + i] * invStd;
      minus[c + i] = -scale * (sums[i] - sums[c + i] * invStd * wmv[c + i]);
    }
    const torch::Tensor k = channelRows(minus, 2, x.scalar_type());
    dx.addcmul_(x, perChannel(k[0], x)).add_(perChannel(k[1], x));
    return {dx, localWeight, localBias, {}, {}, {}, {}, {}};
  }
};

class GlobalAvgPoolFunction : public torch::autograd::Function<GlobalAvgPoolFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const SpatialSplit* split) {
    std::vector<std::int64_t> dims;
    for (std::int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
    double positions = static_cast<double>(x.numel() / (x.size(0) * x.size(1)));
    groupAllreduce(split->comm, &positions, 1, comm::DataType::kF64);
    torch::Tensor sum = x.sum(dims, true).contiguous();
    groupAllreduce(split->comm, sum.data_ptr(), static_cast<std::size_t>(sum.numel()), commTypeOf(sum));
    ctx->saved_data["positions"] = positions;
    ctx->saved_data["shape"] = x.sizes().vec();
    ctx->saved_data["format"] = static_cast<std::int64_t>(x.suggest_memory_format());
    return sum / positions;
  }

  // Every rank holds the same output and its gradient: each block's share needs no exchange.
  // The gradient takes the input's layout: an NCHW gradient of an NHWC block sends the layers
  // below down torch's slow mixed-layout paths (max pooling's backward 3x data-parallel's).
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const double positions = ctx->saved_data["positions"].toDouble();
    const auto format = static_cast<at::MemoryFormat>(ctx->saved_data["format"].toInt());
    return {(grads[0] / positions).expand(ctx->saved_data["shape"].toIntVector()).contiguous(format), {}};
  }
};

// Replicated -> samples: forward keeps this rank's samples; backward gathers every rank's
// slice of the gradient, so each holds the whole gradient of the replicated tensor.
class SampleSliceFunction : public torch::autograd::Function<SampleSliceFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const SpatialSplit* split) {
    ctx->saved_data["split"] = reinterpret_cast<std::int64_t>(split);
    ctx->saved_data["samples"] = x.size(0);
    const Range mine = sampleRange(*split, split->comm.rank(), x.size(0));
    return x.narrow(0, mine.begin, mine.size()).contiguous();
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto* split = reinterpret_cast<const SpatialSplit*>(ctx->saved_data["split"].toInt());
    const torch::Tensor g = grads[0].contiguous();
    const std::int64_t samples = ctx->saved_data["samples"].toInt();
    std::vector<std::int64_t> shape = g.sizes().vec();
    shape[0] = samples;
    Placement p{shape, {}, {}, 0.0, CommKind::kShuffle};
    for (int q = 0; q < split->comm.size(); ++q) {
      p.owned.push_back(samplesBox(*split, q, shape));
      p.needed.push_back(samplesBox(*split, q, shape, Range{0, samples}));
    }
    torch::NoGradGuard noGrad;
    return {redistribute(split->comm, g, p), {}};
  }
};

}  // namespace

torch::Tensor spatialBatchNorm(const SpatialSplit& split, const torch::Tensor& x, const torch::Tensor& weight,
                               const torch::Tensor& bias, torch::Tensor runningMean, torch::Tensor runningVar,
                               const BatchNormSpec& spec) {
  if (x.dim() < 3 || weight.numel() != x.size(1)) {
    throw ConfigError(fmt::format("spatial batch-norm: expected [N, C, spatial...] with {} channels, found {}D with {}",
                                  weight.numel(), x.dim(), x.dim() > 1 ? x.size(1) : 0));
  }
  return BatchNormFunction::apply(x, weight, bias, &split, runningMean, runningVar, spec.momentum, spec.eps);
}

torch::Tensor spatialGlobalAvgPool(const SpatialSplit& split, const torch::Tensor& x) {
  return GlobalAvgPoolFunction::apply(x, &split);
}

torch::Tensor spatialPool(const SpatialSplit& split, const torch::Tensor& x, const PoolSpec& spec) {
  std::vector<WindowAxis> axes;
  std::vector<std::int64_t> inputShape{x.size(0), x.size(1)}, outputExtents;
  for (std::size_t i = 0; i < split.grid.size(); ++i) {
    axes.push_back({.extent = spec.extents.at(i), .kernel = spec.kernel.at(i), .stride = spec.stride.at(i),
                    .padding = spec.padding.at(i)});
    inputShape.push_back(axes.back().extent);
    outputExtents.push_back(axes.back().outputExtent());
  }
  // Max pooling pads with -inf, average pooling with zeros counted in the divisor (torch's
  // count_include_pad): the window carries the padding, the pooling itself pads nothing.
  const bool max = spec.kind == PoolKind::kMax;
  const Placement placement = windowPlacement(
      split, inputShape, outputExtents, [&](int i, Range out) { return axes[static_cast<std::size_t>(i)].inputOf(out); },
      max ? -std::numeric_limits<double>::infinity() : 0.0, spec.inputSplit);
  const torch::Tensor window = redistribute(split.comm, x, placement);
  const std::vector<std::int64_t> zeros(axes.size(), 0);
  if (axes.size() == 3) {
    return max ? torch::max_pool3d(window, spec.kernel, spec.stride, zeros) : torch::avg_pool3d(window, spec.kernel, spec.stride, zeros);
  }
  return max ? torch::max_pool2d(window, spec.kernel, spec.stride, zeros) : torch::avg_pool2d(window, spec.kernel, spec.stride, zeros);
}

torch::Tensor regrid(const SpatialSplit& from, const SpatialSplit& to, const torch::Tensor& x,
                     const std::vector<std::int64_t>& extents) {
  std::vector<std::int64_t> shape{x.size(0), x.size(1)};
  shape.insert(shape.end(), extents.begin(), extents.end());
  requireBlocks(to, extents, "regrid");
  Placement p{shape, {}, {}, 0.0, CommKind::kShuffle};
  for (int q = 0; q < to.comm.size(); ++q) {
    p.owned.push_back(from.blockBox(q, shape));
    p.needed.push_back(to.blockBox(q, shape));
  }
  return redistribute(to.comm, x, p);
}

Range sampleRange(const SpatialSplit& split, int rank, std::int64_t samples) {
  const auto [begin, end] = SpatialSplit::blockAt(rank, split.comm.size(), samples);
  return {begin, end};
}

torch::Tensor spatialToSamples(const SpatialSplit& split, const torch::Tensor& x, const std::vector<std::int64_t>& extents) {
  return blocksToSamples(split, x, extents, false);
}

torch::Tensor spatialToWhole(const SpatialSplit& split, const torch::Tensor& x, const std::vector<std::int64_t>& extents) {
  return blocksToSamples(split, x, extents, true);
}

torch::Tensor replicatedToSamples(const SpatialSplit& split, const torch::Tensor& x) {
  return SampleSliceFunction::apply(x, &split);
}

}  // namespace paraxis::parallel
