#pragma once
// The machine description: one kind of device, devices per node, nodes, and an ordered list
// of network levels from the innermost (e.g. NVLink inside a node) to the outermost (spine).
// Rank r sits on node r / devicesPerNode; a level spans `ranks` consecutive ranks, so two
// ranks talk over the first level whose span contains both.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace paraxis::hw {

struct EfficiencyPoint {
  double flops;       // work of one layer call on one device
  double efficiency;  // achieved fraction of peak at that size
};

// The lowest efficiency a curve may hold. A GPU's smallest calls run far below its peak: a
// few-kFLOP pass that takes 20 us on an H100's 67 TFLOP/s runs at 2e-6 of it, so a fit there
// reaches below 1e-6; 0 or a negative figure is still refused.
inline constexpr double kLowestEfficiency = 1e-9;

// The kinds of matrix kernel a device may run at rates of their own (3-D convolutions are
// not 2-D ones with more FLOPs), by their YAML keys.
enum class Kernel { kConv2d, kConv3d, kFullyConnected };
inline constexpr const char* kKernelKeys[] = {"conv2d", "conv3d", "fully_connected"};
inline constexpr int kKernels = 3;

// The kinds of memory-bound layer pass, each reaching its own fraction of the memory bandwidth
// curve (LibTorch's 3-D max pool on a CPU core streams at a few per cent of a ReLU's rate, its
// 2-D one at most of it). `random`: a pass that draws a random number per element (dropout's
// mask), bound by its generator, not by the memory: on this project's EPYC VM LeNet's dropout
// over 1 to 32 samples' 256 features took 37-132 us where the ReLU before it took 4-10 us, and
// counted as element-wise it set the bandwidth curve's 1-100 KiB decades 2-4x too slow for
// every small pass priced along it. Appended last: saved timings keep their kinds' indices.
enum class MemoryKind { kPool2d, kPool3d, kNormalization, kElementwise, kRandom };
inline constexpr const char* kMemoryKindKeys[] = {"pool2d", "pool3d", "normalization", "elementwise",
                                                  "random"};
inline constexpr int kMemoryKinds = 5;

// Per memory kind, forward and backward: the fraction of the bandwidth curve its passes reach
// (e[kind][0] forward, e[kind][1] backward); 1, the curve's, unless fitted. A `flat` pass runs
// at that fraction of memory_bandwidth whatever its size instead of along the curve: a kind
// bound by its own loop, not by the memory (LibTorch's max_pool3d forward on this project's
// EPYC VM: 0.74-0.93 ms a MiB from 288 KiB to 1.1 GiB, where the curve ran 39-93 GB/s; priced
// along the curve, its 1-9 MiB calls came out 20-50 % short).
struct MemoryEfficiency {
  double of[kMemoryKinds][2];
  bool flat[kMemoryKinds][2] = {};
  MemoryEfficiency() {
    for (double* pass : of) pass[0] = pass[1] = 1;
  }
  double* operator[](int kind) { return of[kind]; }
  const double* operator[](int kind) const { return of[kind]; }
};

// The share of its curve's rate a matrix kernel over `rows` rows (samples x output positions)
// reaches when it runs at half rate over `halfRateRows`: rows / (rows + halfRateRows); 1
// without a figure.
inline double rowsShare(double rows, double halfRateRows) {
  return halfRateRows > 0 && rows > 0 ? rows / (rows + halfRateRows) : 1;
}

// The share of a rank's weights still in a cache of `cacheShare` bytes at their next use when
// the rank touches `workingSet` bytes between two uses (cost::workingSetBytes): cacheShare /
// workingSet, at most 1; 0 without a cache share.
inline double residentShare(double cacheShare, double workingSet) {
  return cacheShare > 0 && workingSet > 0 ? std::min(1.0, cacheShare / workingSet) : 0;
}

// Whether a call over `samples` is over one sample (0: unknown, a batch).
inline bool isOneSample(double samples) { return samples > 0 && samples < 1.5; }

struct KernelCurves {
  std::vector<EfficiencyPoint> forward, backward;  // empty: the device's curve for that pass
  // The forward curve of the calls LibTorch runs with another kernel (cost::runsNativeKernel): a
  // fully connected layer over one sample runs a matrix-vector product, with a rate of its own
  // over its FLOPs (this project's 2-core VMs: LeNet's fc1 at one sample 6.4 GFLOP/s where at 4
  // samples, 4x the FLOPs, it ran 28; ResNet-18 64^2's fc 3.8 and 19). The fit writes it for the
  // fully connected kind (calib::fitDevice); a native convolution runs the batch's product over
  // its column buffer, described by native_column_traffic and its one-sample rows. Its backward
  // passes run on the batched backward curve (a backward curve of their own traded off against the
  // one-sample weight traffic). Empty: the batched curve.
  std::vector<EfficiencyPoint> native;
  // The rows (samples x output positions) at which the kernel runs at half the rate its curve
  // gives: a convolution over few positions reuses each weight it loads few times (ResNet-18's
  // last 3x3 convolutions on 2x2 positions at batch 8 run at a fifth of the rate of its first
  // ones on 16x16, at the same FLOPs). 0: no such effect.
  double halfRateRows = 0;
  // The same for the calls LibTorch runs with its own kernel (cost::runsNativeKernel: a
  // convolution over one small sample, a matrix-vector product) instead of oneDNN's or BLAS's
  // batched one: ResNet-18's 2x2-position convolutions at batch 1 took a third of the time per
  // sample they take at batch 2. The key says "one sample", where most of them are. <0: as
  // halfRateRows.
  double oneSampleHalfRateRows = -1;
  // What is left of the half-rate rows when the kernel's weights are still in the rank's cache
  // since their last use (`resident`, hw::Device::residentShare): a fully connected layer reads
  // each weight once per row, so over few rows its time is its weights streaming, from memory
  // or from the cache. On this project's VMs (2 ranks) LeNet's fc1 (3.1 MiB, ~8 MiB touched a
  // step) ran 325 us forward at 2 samples, ResNet-18's fc (2 MiB of a ~100 MiB step) 445 us
  // and CosmoFlow 32^3's fc1 (4 MiB) 682 us: 105, 226 and 168 us a MiB. 1: no such effect.
  double residentRowsShare = 1;
  double halfRateRowsAt(bool native, double resident = 0) const {
    const double rows = native && oneSampleHalfRateRows >= 0 ? oneSampleHalfRateRows : halfRateRows;
    return resident > 0 ? rows * (1 - resident * (1 - residentRowsShare)) : rows;
  }
  // The reduction depth (input channels per group x kernel volume; a matrix product's input
  // features) at which the kernel runs at half its curve's rate: a product summing over few
  // terms per output streams its output for little arithmetic (LeNet's first convolution, one
  // input channel and 25 taps, ran 1.7x forward what the conv2d curve says; a channel split
  // halves every layer's depth at half its FLOPs). 0: no such effect.
  double halfRateDepth = 0;
  // A weight-gradient pass over filters of fewer than `narrowWeightDepth` weights (input
  // channels per group x kernel volume) runs at `narrowWeightShare` of the rate, oneDNN's
  // calls only: its forward kernels have a path for a few input channels that its weight
  // kernels lack (CosmoFlow's conv1, 4 channels x 27 taps, took 3.2-3.4x its forward's time
  // backward at batches 4-32 where its conv2 over 16 channels took 2.2-2.3x and LibTorch's own
  // one-sample kernel 1.1x). 0: no such filters.
  // What the slow path adds is laying its input out (positions x depth), as much for a few
  // filters as for all: split by filters (`filterShare` of them a rank) only the product
  // shrinks. CosmoFlow 64^3's conv1 at batch 2 took 66 ms for its weight pass over 32 filters
  // and 53 ms over 16, where the whole rate over half the work said 33.
  double narrowWeightDepth = 0;
  double narrowWeightShare = 1;
  double weightShare(bool native, double depth, double filterShare = 1) const {
    if (native || depth <= 0 || depth >= narrowWeightDepth || narrowWeightShare <= 0) return 1;
    return 1 / (1 + (1 / narrowWeightShare - 1) / filterShare);
  }
  // Whether a weight pass's shape share can differ from the other passes'.
  bool weightPassDiffers() const { return narrowWeightDepth > 0 && narrowWeightShare != 1; }
  // The share of the rate a call over a stride above 1 reaches against an unstrided one of the
  // same shape, oneDNN's calls only: its kernels gather their input at the stride (this
  // project's VMs, one thread, batch 4: ResNet-18's 128->256 3x3 convolution at stride 2, 4x4
  // outputs, took 397 us forward where small-cnn's unstrided one of the same FLOPs, rows, depth
  // and weights took 255 us; over all conv2d calls strided ones ran 1.4x forward and 1.6x
  // backward what unstrided ones of their work did). 1: no such effect.
  double stridedShare = 1;
  double strideShare(bool native, bool strided) const { return strided && !native ? stridedShare : 1; }
  // The share of the curve's rate a call over `rows`, native or not, summing `depth` terms per
  // output reaches (a weight pass: with `depth` weights per filter, `filterShare` of the
  // layer's filters; `resident`: the share of its weights in the cache; `strided`: over a
  // stride above 1): rowsShare of each at its half rate (an unknown 0 costs nothing).
  double shapeShare(double rows, bool native, double depth, bool weightPass = false, double resident = 0,
                    bool strided = false, double filterShare = 1) const {
    return rowsShare(rows, halfRateRowsAt(native, resident)) * rowsShare(depth, halfRateDepth) *
           (weightPass ? weightShare(native, depth, filterShare) : 1) * strideShare(native, strided);
  }
};

// Each of a kernel's shape figures by its YAML and JSON key: its member, the value that means
// "no such effect" (not written, not shown) and the range a cluster file may give (the YAML
// reader and writer, the checks, `bench compute --json` and `clusters show` all read this one
// table).
struct KernelFigure {
  const char* key;
  double KernelCurves::*member;
  double none;
  double low, high;
};
inline constexpr KernelFigure kKernelFigures[] = {
    {"half_rate_rows", &KernelCurves::halfRateRows, 0, 0, 1e9},
    {"one_sample_half_rate_rows", &KernelCurves::oneSampleHalfRateRows, -1, 0, 1e9},  // -1: as half_rate_rows
    {"half_rate_depth", &KernelCurves::halfRateDepth, 0, 0, 1e9},
    {"narrow_weight_depth", &KernelCurves::narrowWeightDepth, 0, 0, 1e9},
    {"narrow_weight_share", &KernelCurves::narrowWeightShare, 1, 1e-3, 1},
    {"resident_rows_share", &KernelCurves::residentRowsShare, 1, 0, 1},
    {"strided_share", &KernelCurves::stridedShare, 1, 1e-3, 1}};

// Whether any of `curves`' shape figures differs from its "none".
inline bool hasShape(const KernelCurves& curves) {
  for (const KernelFigure& f : kKernelFigures) {
    if (curves.*f.member != f.none) return true;
  }
  return false;
}

// How many times a convolution's weight-gradient pass moves its weights through memory: per
// pass (zeroing the gradient, converting it between the kernel's layout and the tensor's) and
// per sample (LibTorch's CPU kernels add each sample's contribution into the whole gradient,
// reading and writing it). On this project's VMs, one thread: ResNet-18's 9 MiB 3x3 512->512
// layer's backward took 6, 16, 21 and 60 ms at batch 1, 4, 8 and 32, its forward 1.6-20 ms; at
// batch 8 a spatial split's half of its 2x2 maps took as long. {1, 0}: the weights once (GPU
// kernels keep the gradient on chip).
struct WeightGradientTraffic {
  double perPass = 1;
  double perSample = 0;
  // The times a native call (cost::runsNativeKernel) moves them: LibTorch's own kernel writes
  // the gradient in place, without oneDNN's layout conversions (ResNet-18 64^2's 9 MiB layer
  // took 1.6 ms backward at one sample where 12x per pass would stream 2.8 ms). <0: as a batch.
  double oneSample = -1;
  // The bytes moved for `weightBytes` of weights over `samples`, by a native call or not.
  double bytes(double weightBytes, double samples, bool native) const {
    return weightBytes * (native && oneSample >= 0 ? oneSample : perPass + perSample * samples);
  }
  bool once() const { return perPass == 1 && perSample == 0 && oneSample < 0; }
};

// How the device's figures depend on how many ranks of a node compute at once (CPU "devices"
// share the node's cores, caches and memory bandwidth): they were measured with `ranks` of a
// node computing at once, and one rank alone ran a pass `aloneSpeedup` times faster than each
// of them (calibrate --quick and bench compute time the speed probe both ways). A job that
// runs fewer ranks on a node computes faster: per rank, a pass takes 1/aloneSpeedup of the
// figures alone, growing linearly to the figures at `ranks`; beyond `ranks` the figures say
// nothing, so they stand. {1, 1}: measured alone, or with a device per rank (GPUs).
struct CoreSharing {
  std::int64_t ranks = 1;
  double aloneSpeedup = 1;
  // How much longer than the figures a pass takes with `running` ranks of a node at once.
  double factor(std::int64_t running) const;
  bool isIdentity() const { return ranks <= 1 || aloneSpeedup == 1; }
};

// Where a node's ranks outnumber its cores, how much longer than its figures (CPU time) a rank's
// compute takes on the wall: `shared` times as long where it computes long enough for every
// rank to take its turn (the ranks per core), less in shorter spans between two blocking
// synchronisations, which a rank mostly runs whole on a core while the others wait:
// 1 + (shared - 1)(1 - exp(-span / slice)). calibrate --quick fits it to its timed steps' wall
// time over their CPU time (this project's 2-core VM, 4 ranks on the netns hosts: 1.3x at 1.7
// ms, 1.5x at 2.7 ms, 1.9x from 13 ms on; 2 ranks: 1.00-1.01 everywhere, none written). Measured
// with `ranks` of a node computing at once: a job with fewer shares less, `shared` falling
// linearly to 1 at one rank a node (at()). {1, 1, 0}: a core (or a GPU) per rank.
struct TimeSharing {
  std::int64_t ranks = 1;
  double shared = 1;
  double slice = 0;  // seconds of compute
  double factor(double span) const;
  bool isIdentity() const { return shared <= 1; }
  // The curve with `running` ranks of a node computing at once.
  TimeSharing at(std::int64_t running) const;
};

struct Device {
  std::string name;
  std::map<std::string, double> peakFlops;  // FLOP/s per data type: fp32, tf32, fp16, bf16, ...
  double memoryBytes = 0;
  double memoryBandwidth = 0;  // bytes/s
  // Optional: the bandwidth a layer pass moving that many bytes reaches, increasing in bytes
  // ({bytes, bandwidth} points; interpolated in log(bytes), clamped): small tensors stay in
  // the caches, large ones stream from memory. Empty: memoryBandwidth for every size.
  std::vector<EfficiencyPoint> bandwidthCurve;  // {bytes, bytes/s}
  double secondsPerByte(double bytes) const;
  // Per memory kind (MemoryKind), as fitted to timed layers.
  MemoryEfficiency memoryEfficiency;
  // Seconds per byte of a pass of `memoryKind` (-1: no kind of its own, the curve's).
  double secondsPerByte(double bytes, int memoryKind, bool backward) const {
    if (memoryKind < 0) return secondsPerByte(bytes);
    const int pass = backward ? 1 : 0;
    const double base = memoryEfficiency.flat[memoryKind][pass] ? 1 / memoryBandwidth : secondsPerByte(bytes);
    return base / memoryEfficiency[memoryKind][pass];
  }
  // Fixed cost of launching one layer pass (kernel launches, framework dispatch): what keeps
  // a tiny local problem from running in proportion to its FLOPs.
  double callOverhead = 0;
  // Channels per tile of the device's matrix kernels: a layer left with fewer local channels
  // (a filter or channel split) still pays for a whole tile. 1 = no such effect.
  double channelTile = 1;
  // A convolution's weight-gradient pass's traffic of its weights (a spatial split, which
  // leaves every rank all the weights, does not shrink it).
  WeightGradientTraffic weightGradientTraffic;
  // How many times a convolution's forward over a batch moves its weights through memory
  // before its arithmetic, at the bandwidth of that many bytes: oneDNN reorders LibTorch's
  // weights into its blocked layout on every call. On this project's VMs, one thread, ResNet-18
  // 64^2's 9 MiB 3x3 512->512 layer's forward took ~1 ms more than its first layers' at the
  // same FLOPs at every batch from 2 to 16 (about 4x its weights), its 0.5 MiB 1x1 one ~85 us
  // more; a native call (cost::runsNativeKernel) runs LibTorch's own kernel, which reads them
  // in place. 0: none (GPU kernels read the weights as the arithmetic needs them).
  double forwardWeightTraffic = 0;
  // The bytes that reordering moves for `weightBytes` of a convolution, native or not.
  double forwardWeightBytes(double weightBytes, bool native) const {
    return native ? 0 : forwardWeightTraffic * weightBytes;
  }
  // How many times each pass of a native convolution (cost::runsNativeKernel) moves its column
  // buffer before or after its arithmetic, at the bandwidth of that many bytes: LibTorch's own
  // kernel unfolds its input into an (input channels x kernel volume) x output positions matrix
  // (im2col) for the matrix product, folds the input gradient back from one (col2im), and
  // allocates it afresh each call (its pages fault in). CosmoFlow 64^3 at one sample on this
  // project's VMs: conv1, 113 MB of columns, took 35 ms forward, conv3, 28 MB at the same FLOPs,
  // 23 ms. 0: none (oneDNN's and GPU kernels form no such buffer).
  double nativeColumnTraffic = 0;
  // The device's own cores copy each message it receives from another device of its node
  // (processes sharing a CPU host's memory): a transfer occupies the receiver for its time
  // instead of travelling beside the compute (DMA). Placement prices it so.
  bool receivesByCopy = false;
  // A convolution or fully connected layer split by channels (filter, channel) keeps the whole
  // layer's rate: its efficiency curve is read at the whole layer's FLOPs and the narrowing is
  // priced by the depth share and the channel tile alone. A CPU core's kernel streams the same
  // tiles over fewer channels (small-cnn 32^2's filter=2 convolutions on this project's VMs
  // took 0.53-0.57x their whole time, where the curve at half the FLOPs said 0.65x). False: the
  // curve at the split call's FLOPs, as a smaller layer (a GPU, whose occupancy falls with them).
  bool splitKeepsRate = false;
  // Seconds of calib::kSpeedProbe when the device was measured (0: not measured): a run
  // that records its own (train does) ran on a slower or faster machine by their ratio.
  double speedProbe = 0;
  static constexpr double kMaxSpeedProbe = 60;  // seconds: a figure beyond it is not a probe's
  CoreSharing sharing;
  TimeSharing timeSharing;
  // Increasing in flops; efficiencyAt() interpolates in log(flops) and clamps at the ends.
  std::vector<EfficiencyPoint> efficiency;
  // The same for the backward passes (gradients of data and of weights), by the FLOPs of one
  // pass: a CPU's convolution kernels run them at a lower rate than forward. Empty: the
  // forward curve.
  std::vector<EfficiencyPoint> backwardEfficiency;

  // The same device running `factor` times slower: compute rates and memory bandwidths
  // divided by it, the per-call overhead and the speed probe multiplied (validate
  // --at-run-speed: a run's prediction at the speed its probe measured).
  Device slowedBy(double factor) const;
  double peak(const std::string& dtype) const;  // throws NotFoundError naming the dtypes known
  double efficiencyAt(double flops) const;
  // The same for log(flops), without a logarithm per call when prepare() has run (the oracle
  // adds log(share) to a layer's cached log(flops)).
  double efficiencyAtLog(double logFlops) const;
  // Per kernel kind, curves of its own.
  KernelCurves kernels[kKernels];
  // The efficiency of a pass of `kernel` (-1: not a matrix kernel) at log(flops): the most
  // specific curve there is: a native call's forward (cost::runsNativeKernel) the kernel's
  // native curve; else the kernel's for that pass, the device's for that pass, the kernel's
  // forward, the device's forward.
  double efficiencyOf(int kernel, bool backward, double logFlops, bool native = false) const;
  // The share of its curve's rate a call of `kernel` reaches for its shape (KernelCurves::shapeShare;
  // native: cost::runsNativeKernel); 1 for no matrix kernel.
  double shapeFactor(int kernel, double rows, bool native, double depth, bool weightPass = false,
                     double resident = 0, bool strided = false, double filterShare = 1) const {
    return kernel >= 0
               ? kernels[kernel].shapeShare(rows, native, depth, weightPass, resident, strided, filterShare)
               : 1;
  }
  // Bytes of the last-level cache one rank keeps with its node's ranks computing at once
  // (calibrate --quick and bench compute: a stream's rate over growing buffers, every rank at
  // once; on this project's 2-core VMs 21-35 MiB a rank at 2 ranks and 19 MiB at 4, where the
  // host reports 480 MiB of L3 shared with its other tenants).
  // 0: not measured, no weights taken as resident.
  double cacheShare = 0;
  double residentShare(double workingSet) const { return hw::residentShare(cacheShare, workingSet); }
  // Whether any kernel's time depends on the residence (the oracle skips pricing it otherwise).
  bool weightsMayStayResident() const {
    if (cacheShare <= 0) return false;
    for (const KernelCurves& k : kernels) {
      if (k.residentRowsShare < 1) return true;
    }
    return false;
  }
  // Whether a backward pass of `kernel` (a native call's or not) has a curve other than its forward's.
  bool backwardDiffers(int kernel, bool native = false) const;
  // Caches log(flops) of the curve's points (the loader calls it; efficiencyAt works without).
  void prepare();
  std::vector<double> efficiencyLogs, backwardEfficiencyLogs;
  std::vector<double> kernelLogs[kKernels][3];  // forward, backward, native
  std::vector<double> bandwidthLogs;
  // The lowest efficiency on the curves (1 without a curve), set by prepare(): a pass whose
  // FLOPs at this efficiency still take less time than its bytes is memory-bound whatever the
  // curve says, and the oracle skips evaluating it.
  double efficiencyFloor = 0;
};

struct NetworkLevel {
  std::string name;
  double alpha = 0;             // seconds per message
  double beta = 0;              // seconds per byte on one link (1 / the link's bandwidth)
  std::int64_t ranks = 1;       // consecutive ranks inside one unit of this level
  // Links from each unit of the level below into this one: at the first level beyond the node,
  // the node's NICs (8 x 400 Gbit/s per HGX H200 node); at a spine, the leaf's uplinks. One
  // flow (a ring's traffic out of a unit) runs on one link; flows beyond `links` share them.
  std::int64_t links = 1;
  double oversubscription = 1;  // >1: traffic leaving a unit shares fewer links (ABCI 3:1)
  double contention = 1;        // >1: other jobs' traffic; multiplies beta in the expected case

  double bandwidth() const { return 1.0 / beta; }  // one link
  // What a unit of the level below can send into this level at once: links x bandwidth.
  double injectionBandwidth() const { return static_cast<double>(links) / beta; }
};

// The ways a run's ranks talk, each of which software may drive differently over the same
// wires: neighbour messages (halo exchange, pipeline stage boundaries), a layer's collectives
// (gathers and reductions of a spatial, filter or channel split) and the gradient allreduce.
enum class CommPath { kPointToPoint, kCollectives, kGradientAllreduce };
inline constexpr const char* kCommPathKeys[] = {"point_to_point", "collectives", "gradient_allreduce"};
inline constexpr int kCommPaths = 3;

// What one path achieved on one network level, measured or fitted: an effective start-up
// time and seconds per byte that replace the level's own for that path (a halo exchange staged
// through host memory shows up as a large alpha and a small bandwidth).
struct PathLink {
  std::string level;  // a network level's name
  double alpha = 0;   // seconds per message
  double beta = 0;    // seconds per byte
};

// What happens to the gradient reduction that runs beside backward (the progress thread's
// share of a core, the memory bandwidth both need): measured by `paraxis calibrate --quick`.
struct Overlap {
  double hidden = 1;    // the rate at which communication in flight progresses during compute (1: full speed)
  double slowdown = 1;  // how much longer compute takes while communication is in flight
  // The rate while the gradient engine sends chunk by chunk, each after a readiness agreement
  // (forward priority while backward runs): every call waits for the ranks' communication
  // threads to get a core beside the compute, where one large call waits once. Unset: `hidden`
  // (files from before it was measured).
  std::optional<double> chunked;
  double whileChunked() const { return chunked.value_or(hidden); }
  // The rate at which the previous step's reductions progress through the next forward under
  // forward priority, while it computes and while it waits for them in turns: the ranks reach
  // their waits apart, and a rank's reduction moves only as fast as the peer that still
  // computes lets it (resnet18@64 data=2 on 2 ranks here: 0.9 GB/s beside the forward's
  // compute, 1.1 GB/s while it waited, against 4.7 alone). Unset: `hidden` while it computes
  // and full speed while it waits (files from before it was measured).
  std::optional<double> forward;
  bool isIdentity() const { return hidden == 1 && slowdown == 1 && whileChunked() == 1 && forward.value_or(1) == 1; }
};

// How fast the software converts gradients for a narrow wire: f32 gradient bytes per second
// through one allreduce's conversions (a fused decode+add+encode and a decode per value;
// `paraxis bench convert` measures it, `calibrate --quick` writes it). 0: not measured; the
// oracle then charges two passes at the device's memory bandwidth.
struct WireConversion {
  double f16 = 0;
  double bf16 = 0;
  bool isIdentity() const { return f16 == 0 && bf16 == 0; }
};

// How far the software that ran on this machine fell short of the hardware model: each factor
// multiplies one kind of predicted time (1 = the hardware model as it is). `paraxis calibrate`
// fits them to measured runs; they describe an implementation (a framework's halo path, its
// gathers and copies), not the machine, so presets leave them at 1.
struct Implementation {
  std::string source;            // where the factors come from, shown in reports
  double compute = 1;            // compute of layers no model-parallel axis splits
  double spatialCompute = 1;     // compute of spatially split layers
  double filterCompute = 1;      // compute of layers split by output channel
  double channelCompute = 1;     // compute of layers split by input channel
  double halo = 1;               // halo exchanges
  double spatialGather = 1;      // the gather where a spatial split ends
  double filterCollectives = 1;  // a filter split's gathers of inputs and reductions of their gradients
  double channelCollectives = 1; // a channel split's reductions of partial outputs and gathers
  double gradientAllreduce = 1;  // the gradient allreduce
  // Per path (indexed by CommPath), the levels on which it was measured or fitted.
  std::vector<PathLink> paths[kCommPaths];
  Overlap overlap;
  WireConversion wireConversion;
  // Ranks running equal work drift apart (shared cores, the OS, the caches): every blocking
  // synchronisation waits for the slowest, on average `skew` of the compute since the previous
  // one for a pair of ranks (more for larger groups). 0: ranks keep in step.
  double skew = 0;
  // The same drift while the gradient engine's reductions are in flight beside the compute: the
  // engine's threads take the cores of one rank and then of another, so the ranks drift apart
  // faster (2 ranks on this project's 2-core VM: 0.5-6.2 % of the compute beside the engine's
  // calls over seven calibrations, five of them 3.5-6.2 %, where the quiet spans read 0.4-7.5 %;
  // a small-cnn data=2 step waited 0.27-0.29 ms at its closing agreement, 3 % of its compute).
  // 0: as `skew`.
  double skewBeside = 0;
  double skewWhileReducing() const { return skewBeside > 0 ? skewBeside : skew; }
  // And, whatever the compute between, seconds each blocking synchronisation waits beyond the
  // link's latency: a rank woken from a wait gets its core back only after whatever else ran
  // there (ranks and progress threads outnumbering cores). 0: none.
  double syncWait = 0;
  // The same while the gradient engine's reductions are in flight beside the compute (a
  // replicated step overlapping them): the waiting rank's core goes to the engine's thread, and
  // the rank gets it back only after that thread's time slice. 0: as `syncWait`.
  double syncWaitBeside = 0;
  // Seconds each pipeline handoff (a stage's wait for its neighbour's activations or
  // gradients) costs beyond the transfer. The wait lasts the neighbour's pass, longer than a
  // blocking call spins, so the stage gives its core away; where ranks and progress threads
  // outnumber cores it gets it back only after whatever ran there. 0: none.
  double handoffWait = 0;
  // The time slice the communication threads ran with while this implementation was measured
  // (seconds, as the kernel read it back; 0: the kernel's own, the comm_thread_slice knob at 0
  // or a kernel before 6.12). A woken reduction waits up to a computing thread's slice for its
  // core, so a run made with another slice hides and waits otherwise: validate warns. Unset: not
  // recorded (a preset, a file from before it, a calibration without communication threads).
  std::optional<double> commThreadSlice;

  bool isIdentity() const;
  const PathLink* pathLink(CommPath path, const std::string& level) const;
};

// Every factor with its YAML key, in the order files and reports list them.
struct ImplementationFactor {
  const char* key;
  double Implementation::*field;
};
inline constexpr ImplementationFactor kImplementationFactors[] = {
    {"compute", &Implementation::compute},
    {"spatial_compute", &Implementation::spatialCompute},
    {"filter_compute", &Implementation::filterCompute},
    {"channel_compute", &Implementation::channelCompute},
    {"halo", &Implementation::halo},
    {"spatial_gather", &Implementation::spatialGather},
    {"filter_collectives", &Implementation::filterCollectives},
    {"channel_collectives", &Implementation::channelCollectives},
    {"gradient_allreduce", &Implementation::gradientAllreduce},
};

struct Cluster {
  std::string name;
  std::string description;
  Device device;
  std::int64_t devicesPerNode = 1;
  std::int64_t nodes = 1;
  std::vector<NetworkLevel> levels;
  Implementation implementation;

  std::int64_t totalDevices() const { return devicesPerNode * nodes; }
  // The ranks of a job of `ranks` on its first node (nodes fill in rank order): those that
  // share its cores (Device::sharing).
  std::int64_t ranksOnANode(std::int64_t ranks) const { return std::min(devicesPerNode, ranks); }
  // How much longer than the device's figures a pass takes in a job of `ranks`: the pace of the
  // ranks that share a node's cores (Device::sharing at ranksOnANode).
  double sharingFactor(std::int64_t ranks) const { return device.sharing.factor(ranksOnANode(ranks)); }
  // The device's time-sharing curve for a job of `ranks` (Device::timeSharing at ranksOnANode).
  TimeSharing timeSharingAt(std::int64_t ranks) const { return device.timeSharing.at(ranksOnANode(ranks)); }
  // Index into `levels` of the innermost level that holds both ranks (a != b).
  int levelBetween(std::int64_t a, std::int64_t b) const;
  // Level `level`'s alpha and beta (one link) as `path` sees them: the implementation's
  // figures for that path where it has them, else the level's.
  double alphaOn(CommPath path, int level) const;
  double betaOn(CommPath path, int level) const;

  // Throws ConfigError when the description is inconsistent (naming `source` and the key).
  void validate(const std::string& source) const;
};

}  // namespace paraxis::hw
