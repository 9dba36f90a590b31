#include "parallel/channel_split.hpp"

#include <chrono>

#include "comm/allreduce.hpp"
#include "parallel/spatial_split.hpp"

namespace paraxis::parallel {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

const ChannelSplit& splitIn(AutogradContext* ctx) {
  return *reinterpret_cast<const ChannelSplit*>(ctx->saved_data["split"].toInt());
}

// Every rank's slice of dimension `dim` -> the whole tensor on every rank; differentiable, its
// backward the reduce-scatter (each rank's gradient of its slice summed over the group).
torch::Tensor allgatherSlices(const ChannelSplit& split, const torch::Tensor& x, std::int64_t dim, Slicing slicing) {
  std::vector<std::int64_t> shape = x.sizes().vec();
  shape.at(static_cast<std::size_t>(dim)) = slicing.channels * slicing.unit;
  Placement p{shape, {}, {}, 0.0, CommKind::kCollective};
  for (int q = 0; q < split.comm.size(); ++q) {
    Box whole;
    for (std::int64_t e : shape) whole.push_back({0, e});
    p.needed.push_back(whole);
    whole[static_cast<std::size_t>(dim)] = ChannelSplit::sliceAt(q, split.comm.size(), slicing);
    p.owned.push_back(whole);
  }
  return redistribute(split.comm, x.contiguous(x.suggest_memory_format()), p);
}

class GatherForRedundantFunction : public torch::autograd::Function<GatherForRedundantFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const ChannelSplit* split,
                               std::int64_t channels, std::int64_t unit) {
    ctx->saved_data["split"] = reinterpret_cast<std::int64_t>(split);
    ctx->saved_data["unit"] = unit;
    torch::NoGradGuard noGrad;
    return allgatherSlices(*split, x, 1, {channels, unit});
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const torch::Tensor g = splitIn(ctx).local(grads[0], 1, ctx->saved_data["unit"].toInt());
    return {g.contiguous(g.suggest_memory_format()), {}, {}, {}};
  }
};

class SliceFunction : public torch::autograd::Function<SliceFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const ChannelSplit* split,
                               std::int64_t unit) {
    ctx->saved_data["split"] = reinterpret_cast<std::int64_t>(split);
    ctx->saved_data["channels"] = x.size(1) / unit;
    ctx->saved_data["unit"] = unit;
    const torch::Tensor mine = split->local(x, 1, unit);
    return mine.contiguous(mine.suggest_memory_format());  // a channel slice of NHWC stays NHWC
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    torch::NoGradGuard noGrad;
    const Slicing slicing{ctx->saved_data["channels"].toInt(), ctx->saved_data["unit"].toInt()};
    return {allgatherSlices(splitIn(ctx), grads[0], 1, slicing), {}, {}};
  }
};

class SumPartialsFunction : public torch::autograd::Function<SumPartialsFunction> {
 public:
  static torch::Tensor forward(AutogradContext*, const torch::Tensor& x, const ChannelSplit* split) {
    return sumOverGroup(*split, x);
  }
  static variable_list backward(AutogradContext*, variable_list grads) { return {grads[0], {}}; }
};

class CompleteGradientFunction : public torch::autograd::Function<CompleteGradientFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const ChannelSplit* split) {
    ctx->saved_data["split"] = reinterpret_cast<std::int64_t>(split);
    return x.view_as(x);  // a new node for autograd, the same data
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {sumOverGroup(splitIn(ctx), grads[0]), {}};
  }
};

}  // namespace

Range ChannelSplit::sliceAt(int rank, int ranks, Slicing slicing) {
  const auto [begin, end] = SpatialSplit::blockAt(rank, ranks, slicing.channels);
  return {begin * slicing.unit, end * slicing.unit};
}

torch::Tensor ChannelSplit::local(const torch::Tensor& t, std::int64_t dim, std::int64_t unit) const {
  const Range mine = slice({t.size(dim) / unit, unit});
  return t.narrow(dim, mine.begin, mine.size());
}

torch::Tensor ChannelSplit::gather(const torch::Tensor& slice, std::int64_t dim, Slicing slicing) const {
  torch::NoGradGuard noGrad;
  return comm.size() == 1 ? slice : allgatherSlices(*this, slice, dim, slicing);
}

torch::Tensor gatherChannels(const ChannelSplit& split, const torch::Tensor& x, Slicing slicing, Consumer consumer) {
  if (split.comm.size() == 1) return x;
  if (consumer == Consumer::kSplit) return allgatherSlices(split, x, 1, slicing);
  return GatherForRedundantFunction::apply(x, &split, slicing.channels, slicing.unit);
}

torch::Tensor sliceChannels(const ChannelSplit& split, const torch::Tensor& x, std::int64_t unit) {
  return split.comm.size() == 1 ? x : SliceFunction::apply(x, &split, unit);
}

torch::Tensor sumPartials(const ChannelSplit& split, const torch::Tensor& x) {
  return split.comm.size() == 1 ? x : SumPartialsFunction::apply(x, &split);
}

torch::Tensor completeGradient(const ChannelSplit& split, const torch::Tensor& x) {
  return split.comm.size() == 1 || !x.requires_grad() ? x : CompleteGradientFunction::apply(x, &split);
}

// Into a new tensor (the input may be saved for another backward): no copy before the wire, in
// the layout the input has (NHWC stays NHWC; every rank's tensor has the same layout).
torch::Tensor sumOverGroup(const ChannelSplit& split, const torch::Tensor& x) {
  const torch::Tensor in = x.contiguous(x.suggest_memory_format());
  torch::Tensor sum = torch::empty_like(in, in.suggest_memory_format());
  const auto start = std::chrono::steady_clock::now();
  comm::allreduce(split.comm, in.data_ptr(), sum.data_ptr(), static_cast<std::size_t>(sum.numel()), commTypeOf(sum));
  addCommTime(CommKind::kCollective, start, static_cast<std::int64_t>(sum.numel() * sum.element_size()));
  return sum;
}

}  // namespace paraxis::parallel
