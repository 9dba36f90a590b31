#pragma once
// How a gradient reduction in flight and the compute beside it get along on this machine
// (`paraxis calibrate --quick`): a convolution's forward and backward timed alone and with an
// allreduce in flight, as the gradient engine runs it: one large call (a group once every group
// is agreed), and chunk by chunk from a thread of its own, each chunk after an 8-byte readiness
// agreement (forward priority while backward runs). The header keeps torch out of its includers.
#include <vector>

#include "comm/communicator.hpp"
#include "hw/cluster.hpp"

namespace paraxis::calib {

struct OverlapMeasurement {
  double bytes = 0;           // the allreduce, sized to outlast the compute alone
  double reductionAlone = 0;  // seconds, slowest rank; each time the median of its trials
  double computeAlone = 0;
  double computeBeside = 0;   // the compute with the reduction in flight
  double waitAfter = 0;       // what was left of the reduction when the compute ended
  double chunkedAlone = 0;    // the same bytes chunk by chunk, each after an agreement
  double chunkedBeside = 0;   // the compute with those calls in flight
  double chunkedWaitAfter = 0;
  // The forward-priority tail: groups reduced from a thread of their own while layer-sized
  // spans compute and wait for each in turn (seconds alone, of compute, the forward's whole).
  double tailAlone = 0, tailCompute = 0, tailElapsed = 0;
  int tailGroups = 0;
  hw::Overlap overlap;        // medians over trials, each from its own alone and beside times:
                              // slowdown: compute beside / alone; hidden: the reduction's
                              // progress during the compute beside over that compute; chunked:
                              // the same for the chunk-by-chunk calls; forward: the rate
                              // that makes plan's model wait what the tail check waited
};

// Collective over `comm` (of two ranks or more); every rank returns the same figures.
OverlapMeasurement measureOverlap(const comm::Communicator& comm, double deadline);

// How far ranks running the same compute drift apart: each rank computes, then waits in a
// blocking 8-byte allreduce, as a layer's collective or a step's last gradient reduction does.
// One sitting of such spans: the latency (the allreduce right after a barrier: no one to wait
// for), and per kind of span its compute and wait (seconds, each the mean over the sitting's
// spans and the ranks): short, long (4x the compute), many layer-sized ones (~1.4 ms) back to
// back, and those again with the gradient engine's calls in flight beside them, and the short and
// long ones too. The layer-sized spans' waits also block by block (kSkewBlocks runs of spans in
// turn, each block's mean): a stall sets in and lifts within a sitting, and the blocks show how
// much of the sitting it held. Empty blocks read as one block of the whole mean.
inline constexpr int kSkewBlocks = 8;
struct SkewSitting {
  int side = 0;  // the spans' images (side x side), sized to this machine's speed when it sat
  double latency = 0;
  double layerCompute = 0, layerWait = 0, shortCompute = 0, shortWait = 0;
  double longCompute = 0, longWait = 0, besideCompute = 0, besideWait = 0;
  double shortBesideCompute = 0, shortBesideWait = 0, longBesideCompute = 0, longBesideWait = 0;
  std::vector<double> layerWaitBlocks, besideWaitBlocks;
};

struct SkewMeasurement {
  SkewSitting spans;    // each figure's mean over the sittings
  double compute = 0;   // spans' short and long compute, their mean
  double wait = 0;      // and their wait
  // The slope of the wait between the short and the long spans (hw::Implementation::skew), and
  // the layer-sized spans' typical wait less the latency and that slope's share (::syncWait):
  // the median over every sitting's blocks, each less its own sitting's latency and share; >= 0.
  double skew = 0;
  double syncWait = 0;
  // What each synchronisation waits beside the engine's calls (::syncWaitBeside): the same
  // over the beside spans' blocks, and no less than syncWait.
  double syncWaitBeside = 0;
  // The slope of the wait between the short and the long spans beside the engine's calls
  // (::skewBeside), >= 0.
  double skewBeside = 0;
  // What each sitting alone read for syncWaitBeside, skew and skewBeside (skew and skewBeside
  // above are their medians; the waits, their blocks' median).
  std::vector<double> sittingSyncWait, sittingSyncWaitBeside, sittingSkew, sittingSkewBeside;
  std::vector<int> sittingSide;
};

// Collective over `comm` (of two ranks or more), ~5 s on 2 ranks whatever the machine's speed
// (the spans' images are sized to it); every rank returns the same figures.
SkewSitting timeSkewSitting(const comm::Communicator& comm, double deadline);

// The figures of sittings made at different times: each span kind's mean over all of them, skew
// and skewBeside each the median of the sittings' own (core/median.hpp: of two, the larger), and
// syncWait and syncWaitBeside the median of all the sittings' blocks. The waits are stalls that
// come and go with the machine's load from one second to the next; the runs they predict are
// each the median of a few, which a stall leaves out as well.
SkewMeasurement skewFromSittings(const std::vector<SkewSitting>& sittings);

}  // namespace paraxis::calib
