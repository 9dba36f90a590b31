#pragma once
// Compute time of one layer pass on one device, from the *local* problem the rank runs
// (COST-MODELS.md section 2): a roofline of FLOPs at the efficiency the device reaches for a
// call of that size, and bytes at its memory bandwidth, plus a fixed per-call overhead.
// Small local problems (a thin slab, a few filters, a micro-batch of one) therefore run at
// low efficiency instead of being assumed to scale — the error ParaDL makes.
#include <span>
#include <vector>

#include "graph/layer.hpp"
#include "graph/model.hpp"
#include "hw/cluster.hpp"

namespace paraxis::cost {

// The share of a layer one rank computes.
struct LocalShare {
  double samples = 1;         // samples in the local batch
  double spatial = 1;         // fraction of output positions (spatial split)
  double inputSpatial = 1;    // fraction of input positions, halo included
  double inputChannels = 1;   // fraction of input channels (a channel split; a filter split's channel-wise layers)
  double outputChannels = 1;  // fraction of output channels (filter split)
  // The share of the layer's weights still in the rank's cache at this call
  // (hw::Device::residentShare of the rank's working set; 0: none).
  double weightsResident = 0;
  // The arithmetic a spatially split convolution does over its output share of the whole's
  // (windowTapScale): its window holds the padding along a split dimension as zeros and
  // computes their taps, which the whole layer's kernel skips. 1: none.
  double tapScale = 1;
};

// The share of a convolution's taps along spatial dimension `dim` that fall on its padding over
// its whole extent (the taps a kernel that pads by itself skips); 0 for other layers. ResNet-18
// 64²'s 3x3 convolutions on 2 rows: 2 of 6 along each dimension.
double paddedTapShare(const graph::Layer& layer, const graph::TensorShape& input, int dim);
// What splitting a convolution along `dim` multiplies its arithmetic by (LocalShare::tapScale is
// the product over its split dimensions): 1 / (1 - paddedTapShare), its window computing them.
double windowTapScale(const graph::Layer& layer, const graph::TensorShape& input, int dim);
// A layer split spatially, `splits[d]` ranks along its output's spatial dimension d (one per
// dimension): multiplies `share`'s output share (the largest block), input share (the block
// and its halo, where input and output have the same dimensions) and tap scale by the split's.
void applySpatialSplit(const graph::Layer& layer, const graph::TensorShape& input,
                       std::span<const int> splits, LocalShare& share);

// The bytes a rank touches in a training step, between two uses of the same weights: its
// weights, their gradients and `optimizerStates` copies more, its activations kept for backward
// with their gradients, and the column buffers its native convolutions form in each of their
// three passes (`columnBytes` a pass, summed over the layers; hw::Device::residentShare).
// CosmoFlow 32^3's fc1 (4 MiB) ran at ResNet-18's fc's rate a byte inside its model, at
// LeNet's alone: its one-sample convolutions form ~25 MB of columns a pass.
inline double workingSetBytes(double weightBytes, double optimizerStates, double activationBytes,
                              double columnBytes = 0) {
  return weightBytes * (2 + optimizerStates) + 2 * activationBytes + 3 * columnBytes;
}

struct PassWork {
  double flops = 0;
  double bytes = 0;
  double rows = 0;     // a matrix kernel's rows: samples x output positions (hw::Device::shapeFactor)
  double samples = 0;  // the samples of the call (one runs other kernels); 0: unknown, a batch
  // Bytes moved before the arithmetic, not beside it (a convolution's forward reordering its
  // weights, hw::Device::forwardWeightTraffic): their time adds to the pass's.
  double serialBytes = 0;
  bool native = false;  // LibTorch runs it with its own kernel (runsNativeKernel)
  double depth = 0;     // its reduction depth: local input channels per group x kernel volume (0: unknown)
  bool weightGradient = false;  // the weight-gradient pass (hw::KernelCurves::narrowWeightDepth)
  double filterShare = 1;  // the share of the layer's filters it computes (hw::KernelCurves::weightShare)
  double resident = 0;  // the share of its weights in the cache (LocalShare::weightsResident)
  // The FLOPs its efficiency curve is read at (curveFlopShare of the layer's per sample). 0: `flops`.
  double curveFlops = 0;
  double curveKey() const { return curveFlops > 0 ? curveFlops : flops; }
  bool strided = false;  // a convolution over a stride above 1 (hw::KernelCurves::stridedShare)
};

// Which kernel LibTorch runs a matrix layer with, by its CPU build's dispatch (1.13,
// ConvParams::use_mkldnn): a convolution runs LibTorch's own im2col kernel ("native") when it
// is transposed; when it is 1x1, unstrided and undilated over fewer than 16 samples (one
// thread); and over one sample whose input's first four dimensions (samples x channels x the
// first two spatial extents) hold at most 20,480 elements, unless its kernel is wider than 3 in
// both of its last two dimensions or grouped. Else oneDNN's. A fully connected layer over one
// sample runs a matrix-vector product. CosmoFlow 64^3 at one sample: conv2 (32 x 32 x 32
// leading elements) ran at its batch rate, conv1, conv3 and conv4 (16,384, 16,384, 8,192) at a
// third of it. The device's one-sample figures describe the native calls.
struct NativeKernelRule {
  bool known = false;             // false: a rule not derived, every one-sample call native
  bool fullyConnected = false;
  bool convolution = false;
  bool transposed = false;
  bool pointwise = false;         // 1x1, unstrided, undilated
  bool alwaysOneDnn = false;      // grouped, or wider than 3 in both last kernel dimensions
  double leadingElements = 0;     // per sample: input channels x the input's first two spatial extents
  // Elements of the column buffer a native call forms per FLOP of its forward: 1 / (2 x the
  // channels the buffer leaves out: a convolution's output channels, a transposed one's input
  // channels); 0 for an unstrided 1x1 one, which multiplies its input as it is.
  double columnsPerFlop = 0;
};
inline constexpr double kNativeLeadingElements = 20480;
NativeKernelRule nativeKernelRule(const graph::Layer& layer, const graph::TensorShape& input);
// Whether a call over the local share `share` of the layer runs natively.
bool runsNativeKernel(const NativeKernelRule& rule, const LocalShare& share);
// The elements of the column buffer such a call forms for `forwardFlops` of the whole layer per
// sample (hw::Device::nativeColumnTraffic).
double columnElements(const NativeKernelRule& rule, double forwardFlops, const LocalShare& share);

struct LayerWork {
  PassWork forward, backwardData, backwardWeight;
  double tileWaste = 1;  // how much longer the matrix kernels run than the FLOPs say
  double columnBytes = 0;  // a native convolution's column buffer, per pass (else 0)
  int kernel = -1;       // hw::Kernel of a matrix layer (its curves), -1 for the rest
  int memoryKind = -1;   // hw::MemoryKind of the rest (its bandwidth), -1 for matrix layers and views
};

// The hw::Kernel a layer runs (as an index), or -1 when it is no matrix product.
int kernelOf(const graph::Layer& layer);
// A weighted layer's reduction depth over its whole input: the terms each output sums, a
// filter's weights (input channels per group x kernel volume; a matrix product's input
// features); 0 for the rest. A channel split's call sums over its share.
double reductionDepth(const graph::Layer& layer);
// The hw::MemoryKind of a layer that is no matrix product (as an index), or -1.
int memoryKindOf(const graph::Layer& layer);

// Whether `layer` is a convolution over a stride above 1 in some dimension.
bool isStrided(const graph::Layer& layer);

// The share of a layer's one-sample FLOPs its efficiency curve is read at: its call's share
// (samples x positions x the channel split's), or, for a weighted layer on a device that keeps
// its rate over a channel split (hw::Device::splitKeepsRate), the call's with the channels whole:
// the split narrows the product, which the depth share and the channel tile price.
double curveFlopShare(const LocalShare& s, bool weighted, const hw::Device& device);

// How much longer a weighted layer's kernels run when a split leaves it fewer channels than a
// tile of `tile` (hw::Device::channelTile), relative to the whole layer (whose efficiency the
// device's curve already describes): per split dimension, max(c, tile)/c at the local c over
// the same at the whole c.
double channelTileWaste(double tile, double inputChannels, double outputChannels, double inputShare,
                        double outputShare);

// FLOPs and bytes moved per pass for the local share of `layer`, whose first input has
// `inputElements` per sample (and `inputChannels` channels, with the device's `channelTile`,
// for the tile waste).
// The device gives the channel tile and the weight-gradient pass's traffic (the default: one
// tile, the weights moved once).
// `native`: the layer's kernel rule (without one, every one-sample call counts as native).
LayerWork layerWork(const graph::Layer& layer, double inputElements, const LocalShare& share, int bytesPerElement,
                    const hw::Device& device = hw::Device{}, double inputChannels = 0,
                    const NativeKernelRule& native = {});

// Whether `kernel`'s weight-gradient pass adds sample after sample into the whole gradient
// (hw::WeightGradientTraffic): a convolution's; a fully connected layer's is one
// matrix product.
bool accumulatesBySample(int kernel);

// overhead + max(flops / (peak x efficiency(flops) x shapeFactor(rows, depth)), bytes / memory bandwidth)
// + serialBytes / memory bandwidth; 0 for no work.
// `backward`: a gradient pass; `kernel`: the curve's kernel (hw::Device::efficiencyOf);
// `memoryKind`: the bandwidth's kind (hw::Device::memoryEfficiency).
double passSeconds(const hw::Device& device, double peak, const PassWork& work, bool backward = false, int kernel = -1,
                   int memoryKind = -1);

struct LayerTimes {
  double forward = 0, backwardData = 0, backwardWeight = 0;
};

LayerTimes layerTimes(const hw::Device& device, double peak, const LayerWork& work);

// A layer's work for a share of one, prepared once per model: evaluating a strategy then
// reads flat numbers instead of the graph's layer records, and looks the efficiency curve up
// by log(flops) = log(flops of one sample) + log(share) without a logarithm per pass.
struct LayerProfile {
  double flops[3] = {0, 0, 0};  // forward, backward-data, backward-weight, one sample
  double logFlops[3] = {0, 0, 0};
  double inputElements = 0;     // per sample, first input
  double outputElements = 0;    // per sample
  double params = 0;
  double positions = 1;         // output positions per sample: a matrix kernel's rows per sample
  double depth = 0;             // weighted layers: the reduction depth unsplit (reductionDepth)
  double inputChannels = 0;     // weighted layers: the matrix product's channel dimensions
  double outputChannels = 0;
  bool weighted = false;        // conv, deconv, fully connected: both channel dimensions split
  int kernel = -1;              // kernelOf(layer)
  int memoryKind = -1;          // memoryKindOf(layer)
  bool view = false;            // input, flatten: no kernels
  bool strided = false;         // isStrided(layer)
  NativeKernelRule native;
};

std::vector<LayerProfile> profileLayers(const graph::Model& model);

// log(x) for a run of equal x (consecutive layers mostly share a share).
class LogMemo {
 public:
  double operator()(double x);

 private:
  double x_ = -1;
  double log_ = 0;
};

// The device's rates with their reciprocals taken once per evaluation.
struct DeviceRates {
  DeviceRates(const hw::Device& device, double peak);
  const hw::Device* device;
  double peak;
  double secondsPerByte;        // 1 / memory bandwidth
  double floorSecondsPerFlop;   // 1 / (peak x the curve's lowest efficiency); 0 without a floor
};

// The bytes of the column buffer a native call of the layer `profile` describes forms in a
// pass over `share` (0 where it runs another kernel, or is no matrix kernel).
double nativeColumnBytes(const LayerProfile& profile, const LocalShare& share, int bytesPerElement);

// workingSetBytes of a rank holding the whole model over `samples` a pass.
double wholeModelWorkingSet(const graph::Model& model, const std::vector<LayerProfile>& profiles, double samples,
                            double optimizerStates);

// The share of its weights such a rank keeps in its cache (hw::Device::residentShare; 0 where the
// device takes none as resident): what a pipeline's stage cut and a placement's operations are
// priced with.
double wholeModelResidentShare(const graph::Model& model, const std::vector<LayerProfile>& profiles,
                               const hw::Device& device, double samples, double optimizerStates = 1);

// Equal to layerTimes(device, peak, layerWork(layer, ...)) for the layer `profile` describes.
LayerTimes layerTimes(const DeviceRates& rates, const LayerProfile& profile, const LocalShare& share,
                      int bytesPerElement, LogMemo& logs);

}  // namespace paraxis::cost
