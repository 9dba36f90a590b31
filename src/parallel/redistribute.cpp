#include "parallel/redistribute.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>

#include "comm/collectives.hpp"
#include "core/error.hpp"
#include "parallel/spatial_split.hpp"

namespace paraxis::parallel {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

Box wholeOf(const std::vector<std::int64_t>& shape) {
  Box box;
  for (std::int64_t e : shape) box.push_back({0, e});
  return box;
}

std::vector<std::int64_t> extentsOf(const Box& box) {
  std::vector<std::int64_t> shape;
  for (const Range& r : box) shape.push_back(r.size());
  return shape;
}

// The part `box` of a tensor that holds the cells of `origin` (both in global coordinates).
torch::Tensor viewOf(torch::Tensor t, const Box& origin, const Box& box) {
  for (std::size_t d = 0; d < box.size(); ++d) {
    t = t.narrow(static_cast<std::int64_t>(d), box[d].begin - origin[d].begin, box[d].size());
  }
  return t;
}

// The cells this rank sends to and receives from each peer, in peer order; its own cells are
// copied directly (`self`: the box it both owns and needs), never through the exchange.
struct Exchange {
  std::vector<Box> send, recv;
  std::vector<std::size_t> sendCounts, recvCounts;
  Box self;
};

Exchange exchangeOf(const Placement& p, int me) {
  const Box global = wholeOf(p.globalShape);
  Exchange e;
  for (std::size_t q = 0; q < p.owned.size(); ++q) {
    const bool mine = static_cast<int>(q) == me;
    e.send.push_back(mine ? Box(global.size()) : intersect(intersect(p.needed[q], global), p.owned[me]));
    e.recv.push_back(mine ? Box(global.size()) : intersect(intersect(p.needed[me], global), p.owned[q]));
    e.sendCounts.push_back(static_cast<std::size_t>(cells(e.send.back())));
    e.recvCounts.push_back(static_cast<std::size_t>(cells(e.recv.back())));
  }
  e.self = intersect(intersect(p.needed[me], global), p.owned[me]);
  return e;
}

// Does any rank need a cell another owns, or a box other than its own? (The same answer on
// every rank: the placement is global.)
bool movesData(const Placement& p) {
  for (std::size_t q = 0; q < p.owned.size(); ++q) {
    for (std::size_t d = 0; d < p.globalShape.size(); ++d) {
      if (p.needed[q][d].begin != p.owned[q][d].begin || p.needed[q][d].end != p.owned[q][d].end) return true;
    }
  }
  return false;
}

torch::Tensor pack(const torch::Tensor& t, const Box& origin, const std::vector<Box>& boxes) {
  std::int64_t total = 0;
  for (const Box& b : boxes) total += cells(b);
  torch::Tensor flat = torch::empty({total}, t.options().memory_format(c10::nullopt));
  std::int64_t offset = 0;
  for (const Box& b : boxes) {
    const std::int64_t n = cells(b);
    if (n > 0) flat.narrow(0, offset, n).view(extentsOf(b)).copy_(viewOf(t, origin, b));
    offset += n;
  }
  return flat;
}

void unpack(const torch::Tensor& flat, torch::Tensor& t, const Box& origin, const std::vector<Box>& boxes, bool add) {
  std::int64_t offset = 0;
  for (const Box& b : boxes) {
    const std::int64_t n = cells(b);
    if (n > 0) {
      torch::Tensor part = flat.narrow(0, offset, n).view(extentsOf(b));
      torch::Tensor target = viewOf(t, origin, b);
      add ? target.add_(part) : target.copy_(part);
    }
    offset += n;
  }
}

std::vector<std::size_t> displacementsOf(const std::vector<std::size_t>& counts) {
  std::vector<std::size_t> displs(counts.size(), 0);
  for (std::size_t q = 1; q < counts.size(); ++q) displs[q] = displs[q - 1] + counts[q - 1];
  return displs;
}

torch::Tensor allToAll(const comm::Communicator& comm, const torch::Tensor& send, const std::vector<std::size_t>& sendCounts,
                       const std::vector<std::size_t>& recvCounts, CommKind kind) {
  const auto start = std::chrono::steady_clock::now();
  std::size_t total = 0;
  for (std::size_t c : recvCounts) total += c;
  torch::Tensor recv = torch::empty({static_cast<std::int64_t>(total)}, send.options());
  comm::alltoallv(comm, send.data_ptr(), sendCounts, displacementsOf(sendCounts), recv.data_ptr(), recvCounts,
                  displacementsOf(recvCounts), commTypeOf(send));
  std::size_t sent = 0;
  for (std::size_t c : sendCounts) sent += c;
  addCommTime(kind, start, static_cast<std::int64_t>((sent + total) * send.element_size()));
  return recv;
}

// A placement travels through autograd's saved data as integers: [dims, ranks, shape, owned
// boxes, needed boxes], each box as begin, end per dimension.
std::vector<std::int64_t> encode(const Placement& p) {
  std::vector<std::int64_t> v{static_cast<std::int64_t>(p.globalShape.size()), static_cast<std::int64_t>(p.owned.size())};
  v.insert(v.end(), p.globalShape.begin(), p.globalShape.end());
  for (const auto* boxes : {&p.owned, &p.needed}) {
    for (const Box& b : *boxes) {
      for (const Range& r : b) v.insert(v.end(), {r.begin, r.end});
    }
  }
  return v;
}

Placement decode(const std::vector<std::int64_t>& v) {
  const auto dims = static_cast<std::size_t>(v[0]), ranks = static_cast<std::size_t>(v[1]);
  Placement p;
  p.globalShape.assign(v.begin() + 2, v.begin() + 2 + static_cast<std::ptrdiff_t>(dims));
  std::size_t at = 2 + dims;
  for (auto* boxes : {&p.owned, &p.needed}) {
    for (std::size_t q = 0; q < ranks; ++q) {
      Box b;
      for (std::size_t d = 0; d < dims; ++d, at += 2) b.push_back({v[at], v[at + 1]});
      boxes->push_back(std::move(b));
    }
  }
  return p;
}

class RedistributeFunction : public torch::autograd::Function<RedistributeFunction> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& local, const comm::Communicator* comm,
                               std::vector<std::int64_t> encoded, double fill, std::int64_t kind) {
    const Placement p = decode(encoded);
    const int me = comm->rank();
    const Exchange e = exchangeOf(p, me);
    const torch::Tensor received =
        allToAll(*comm, pack(local, p.owned[me], e.send), e.sendCounts, e.recvCounts, static_cast<CommKind>(kind));
    // Owners cover every cell inside the global tensor: only a window past its edge needs the fill.
    const bool inside = cells(intersect(p.needed[me], wholeOf(p.globalShape))) == cells(p.needed[me]);
    // In the layout of the input (NHWC stays NHWC, the layers' own).
    torch::Tensor out = torch::empty(extentsOf(p.needed[me]), local.options().memory_format(local.suggest_memory_format()));
    if (!inside) out.fill_(fill);
    if (cells(e.self) > 0) viewOf(out, p.needed[me], e.self).copy_(viewOf(local, p.owned[me], e.self));
    unpack(received, out, p.needed[me], e.recv, false);
    ctx->saved_data["comm"] = reinterpret_cast<std::int64_t>(comm);
    ctx->saved_data["placement"] = std::move(encoded);
    ctx->saved_data["kind"] = kind;
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto* comm = reinterpret_cast<const comm::Communicator*>(ctx->saved_data["comm"].toInt());
    const Placement p = decode(ctx->saved_data["placement"].toIntVector());
    const int me = comm->rank();
    const Exchange e = exchangeOf(p, me);
    // The reverse exchange: what this rank received, it returns; what it sent comes back.
    const torch::Tensor returned = allToAll(*comm, pack(grads[0], p.needed[me], e.recv), e.recvCounts, e.sendCounts,
                                            static_cast<CommKind>(ctx->saved_data["kind"].toInt()));
    // empty + zero_: torch::zeros ignores a memory format in its options, and an NCHW gradient
    // of an NHWC block sends the layers below down torch's slow mixed-layout paths.
    torch::Tensor grad =
        torch::empty(extentsOf(p.owned[me]), grads[0].options().memory_format(grads[0].suggest_memory_format())).zero_();
    if (cells(e.self) > 0) viewOf(grad, p.owned[me], e.self).copy_(viewOf(grads[0], p.needed[me], e.self));
    unpack(returned, grad, p.owned[me], e.send, true);
    return {grad, {}, {}, {}, {}};
  }
};

}  // namespace

Box intersect(const Box& a, const Box& b) {
  Box out;
  for (std::size_t d = 0; d < a.size(); ++d) {
    out.push_back({std::max(a[d].begin, b[d].begin), std::max(std::max(a[d].begin, b[d].begin),
                                                             std::min(a[d].end, b[d].end))});
  }
  return out;
}

std::int64_t cells(const Box& box) {
  std::int64_t n = 1;
  for (const Range& r : box) n *= r.size();
  return n;
}

torch::Tensor redistribute(const comm::Communicator& comm, const torch::Tensor& local, const Placement& placement) {
  const auto ranks = static_cast<std::size_t>(comm.size());
  if (placement.owned.size() != ranks || placement.needed.size() != ranks) {
    throw ConfigError(fmt::format("redistribute: a placement over {} ranks on a group of {}", placement.owned.size(), ranks));
  }
  const std::vector<std::int64_t> mine = extentsOf(placement.owned[comm.rank()]);
  if (local.sizes().vec() != mine) {
    throw ConfigError(fmt::format("redistribute: rank {} holds a block of {} but owns {}", comm.rank(),
                                  fmt::join(local.sizes().vec(), "x"), fmt::join(mine, "x")));
  }
  if (!movesData(placement)) return local;  // every rank needs exactly what it owns
  return RedistributeFunction::apply(local, &comm, encode(placement), placement.fill,
                                     static_cast<std::int64_t>(placement.kind));
}

}  // namespace paraxis::parallel
