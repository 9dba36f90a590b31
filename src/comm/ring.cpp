#include "comm/ring.hpp"

#include <utility>

namespace paraxis::comm::detail {
namespace {

int wrap(int i, int p) { return ((i % p) + p) % p; }

int floorPow2(int p) {
  int q = 1;
  while (q * 2 <= p) q *= 2;
  return q;
}

// Folds p ranks onto p' = 2^⌊log2 p⌋ participants. Returns this rank's index among the
// participants, or -1 for the even ranks of the first 2(p - p') that sit out.
int foldIn(OpContext& context, Wire& wire, std::byte* acc, std::size_t count) {
  const int rank = context.rank();
  const int rem = context.size() - floorPow2(context.size());
  if (rank >= 2 * rem) return rank - rem;
  if (rank % 2 == 0) {
    wire.sendReduce(acc, 0, count, rank + 1, 0, 0, -1);
    return -1;
  }
  wire.sendReduce(acc, 0, 0, -1, 0, count, rank - 1);
  return rank / 2;
}

// Hands the result back to the ranks that sat out, exactly (in the data type).
void foldOut(OpContext& context, Wire& raw, std::byte* acc, std::size_t count) {
  const int rank = context.rank();
  const int rem = context.size() - floorPow2(context.size());
  if (rank >= 2 * rem) return;
  if (rank % 2 == 0) {
    raw.sendCopy(acc, 0, 0, -1, 0, count, rank + 1);
  } else {
    raw.sendCopy(acc, 0, count, rank - 1, 0, 0, -1);
  }
}

int participant(int index, int rem) { return index < rem ? 2 * index + 1 : index + rem; }

}  // namespace

Chunks::Chunks(std::size_t total, int parts) : offset(parts + 1, 0) {
  const std::size_t base = total / parts;
  const std::size_t extra = total % parts;
  for (int i = 0; i < parts; ++i) {
    offset[i + 1] = offset[i] + base + (static_cast<std::size_t>(i) < extra ? 1 : 0);
  }
}

void ringReduceScatter(OpContext& context, Wire& wire, std::byte* acc, const Chunks& chunks) {
  const int p = context.size();
  const int r = context.rank();
  const int next = wrap(r + 1, p);
  const int prev = wrap(r - 1, p);
  for (int step = 0; step < p - 1; ++step) {
    const int sendChunk = wrap(r - step - 1, p);
    const int recvChunk = wrap(r - step - 2, p);
    wire.sendReduce(acc, chunks.begin(sendChunk), chunks.count(sendChunk), next, chunks.begin(recvChunk),
                    chunks.count(recvChunk), prev);
  }
}

void ringAllgather(OpContext& context, Wire& wire, std::byte* acc, const Chunks& chunks) {
  const int p = context.size();
  const int r = context.rank();
  const int next = wrap(r + 1, p);
  const int prev = wrap(r - 1, p);
  for (int step = 0; step < p - 1; ++step) {
    const int sendChunk = wrap(r - step, p);
    const int recvChunk = wrap(r - step - 1, p);
    wire.sendCopy(acc, chunks.begin(sendChunk), chunks.count(sendChunk), next, chunks.begin(recvChunk),
                  chunks.count(recvChunk), prev);
  }
}

void recursiveDoubling(OpContext& context, Wire& wire, std::byte* acc, std::size_t count) {
  const int rem = context.size() - floorPow2(context.size());
  const int self = foldIn(context, wire, acc, count);
  if (self >= 0) {
    for (int mask = 1; mask < floorPow2(context.size()); mask <<= 1) {
      const int partner = participant(self ^ mask, rem);
      // Both partners add the same two rounded operands, so every rank ends identical.
      wire.roundOwned(acc, 0, count);
      wire.sendReduce(acc, 0, count, partner, 0, count, partner);
    }
  }
  Wire raw = wire.exact();
  foldOut(context, raw, acc, count);
}

void rabenseifner(OpContext& context, Wire& wire, std::byte* acc, std::size_t count) {
  const int pof2 = floorPow2(context.size());
  const int rem = context.size() - pof2;
  const int self = foldIn(context, wire, acc, count);
  if (self >= 0) {
    const Chunks chunks(count, pof2);
    struct Step {
      int partner;
      int keepLo, keepHi, sendLo, sendHi;
    };
    std::vector<Step> steps;
    int lo = 0;
    int hi = pof2;
    // Reduce-scatter by recursive halving: keep one half of the current range, send the other.
    for (int mask = 1; mask < pof2; mask <<= 1) {
      const int partnerIndex = self ^ mask;
      const int mid = lo + (hi - lo) / 2;
      Step s{participant(partnerIndex, rem), lo, mid, mid, hi};
      if (self > partnerIndex) s = {s.partner, mid, hi, lo, mid};
      wire.sendReduce(acc, chunks.begin(s.sendLo), chunks.span(s.sendLo, s.sendHi), s.partner,
                      chunks.begin(s.keepLo), chunks.span(s.keepLo, s.keepHi), s.partner);
      steps.push_back(s);
      lo = s.keepLo;
      hi = s.keepHi;
    }
    wire.roundOwned(acc, chunks.begin(lo), chunks.span(lo, hi));
    // Allgather by recursive doubling: replay the steps backwards, trading kept halves.
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
      wire.sendCopy(acc, chunks.begin(it->keepLo), chunks.span(it->keepLo, it->keepHi), it->partner,
                    chunks.begin(it->sendLo), chunks.span(it->sendLo, it->sendHi), it->partner);
    }
  }
  Wire raw = wire.exact();
  foldOut(context, raw, acc, count);
}

}  // namespace paraxis::comm::detail
