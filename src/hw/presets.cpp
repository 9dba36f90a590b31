// Sources for every figure are in the comments of each preset; see also
// shared/reference/README.md. channel_tile 32 on the V100s: the narrowest tile of Volta's FP32
// convolution and matrix kernels (32-wide warp tiles); on ABCI's measured filter and channel
// runs 16, 32 and 64 all fit, 32 best (docs/measured-format.md). Unmeasured on the others. Efficiency curves are starting points, not measurements: they
// say how far below peak a layer call of a given size runs, and `paraxis calibrate` (or a
// user file) replaces them with fitted values.
#include "hw/presets.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "hw/cluster_yaml.hpp"

namespace paraxis::hw {
namespace {

const char* const kAbci = R"(name: abci
description: ABCI (AIST), ParaDL's system; 4x V100-SXM2-16GB per node, NVLink, InfiniBand EDR fat tree
# ParaDL (HPDC 2021) paper and code: NVLink 50 GB/s inside a node, GPU-to-GPU start-up ~20 us;
# EDR 12.5 GB/s per link (ABCI's nodes have two EDR HCAs; ParaDL's model uses one); full
# bisection inside a rack of 17 nodes, 1:3 between racks;
# latencies leaf 90 ns, spine 400 ns, PLX 110 ns; 1088 nodes. A message between GPUs of two
# nodes crosses GPU -> PLX -> NIC twice: ParaDL's analysis code puts that path at
# 2 x (15 us + 110 ns) plus the switches, 30.31 us in a rack, 30.98 us across the spine (a
# switch's 500 ns alone would make it faster than NVLink's 20 us start-up).
# A rack reaches the spine over its 17 nodes x 2 links (34), oversubscribed 3:1.
device:
  name: Tesla V100-SXM2-16GB
  peak_flops: {fp64: 7.8 TFLOP/s, fp32: 15.7 TFLOP/s, fp16: 125 TFLOP/s}
  memory: 16 GiB
  memory_bandwidth: 900 GB/s
  efficiency: [[1e6, 0.03], [1e7, 0.12], [1e8, 0.35], [1e9, 0.55], [1e10, 0.65], [1e11, 0.7]]
  channel_tile: 32
devices_per_node: 4
nodes: 1088
network:
  - {name: nvlink, alpha: 20 us, bandwidth: 50 GB/s, ranks: node}
  - {name: rack, alpha: 30.31 us, bandwidth: 12.5 GB/s, links: 2, ranks: 68}
  - {name: spine, alpha: 30.98 us, bandwidth: 12.5 GB/s, links: 34, ranks: all, oversubscription: 3}
)";

const char* const kSummit = R"(name: summit
description: Summit (OLCF); 6x V100-SXM2-16GB per node, NVLink 2.0, dual-rail EDR, non-blocking fat tree
# Public OLCF figures (recalled): 4608 nodes, 2x POWER9 + 6x V100 each, NVLink 2.0 bricks of
# 50 GB/s within a socket's 3 GPUs, X-bus 64 GB/s between sockets, 2x 12.5 GB/s EDR per node.
device:
  name: Tesla V100-SXM2-16GB
  peak_flops: {fp64: 7.8 TFLOP/s, fp32: 15.7 TFLOP/s, fp16: 125 TFLOP/s}
  memory: 16 GiB
  memory_bandwidth: 900 GB/s
  efficiency: [[1e6, 0.03], [1e7, 0.12], [1e8, 0.35], [1e9, 0.55], [1e10, 0.65], [1e11, 0.7]]
  channel_tile: 32
devices_per_node: 6
nodes: 4608
network:
  - {name: socket-nvlink, alpha: 10 us, bandwidth: 50 GB/s, ranks: 3}
  - {name: xbus, alpha: 12 us, bandwidth: 32 GB/s, ranks: node}
  - {name: leaf, alpha: 1 us, bandwidth: 12.5 GB/s, links: 2, ranks: 108}
  - {name: spine, alpha: 1.5 us, bandwidth: 12.5 GB/s, links: 36, ranks: all}
)";

const char* const kDgx1 = R"(name: dgx1-v100
description: 32 DGX-1 servers; 8x V100-SXM2-32GB, NVLink hybrid cube-mesh, 4x EDR InfiniBand per node
# NVIDIA DGX-1 datasheet (recalled): cube-mesh of 25 GB/s NVLink bricks (rings of 2 links per
# GPU reach ~50 GB/s), 4x EDR (4x 12.5 GB/s) per server; leaf of 16 servers.
device:
  name: Tesla V100-SXM2-32GB
  peak_flops: {fp64: 7.8 TFLOP/s, fp32: 15.7 TFLOP/s, fp16: 125 TFLOP/s}
  memory: 32 GiB
  memory_bandwidth: 900 GB/s
  efficiency: [[1e6, 0.03], [1e7, 0.12], [1e8, 0.35], [1e9, 0.55], [1e10, 0.65], [1e11, 0.7]]
  channel_tile: 32
devices_per_node: 8
nodes: 32
network:
  - {name: nvlink, alpha: 10 us, bandwidth: 50 GB/s, ranks: node}
  - {name: leaf, alpha: 1 us, bandwidth: 12.5 GB/s, links: 4, ranks: 128}
  - {name: spine, alpha: 1.5 us, bandwidth: 12.5 GB/s, links: 64, ranks: all}
)";

const char* const kDgxA100 = R"(name: dgx-a100
description: DGX A100 SuperPOD of 140 nodes; 8x A100-SXM4-80GB, NVSwitch, 8x HDR 200 Gb/s per node
# NVIDIA DGX A100 datasheet (recalled): NVSwitch 600 GB/s per GPU bidirectional (300 each way),
# 8x HDR (8x 25 GB/s) per node; SuperPOD scalable units of 20 nodes. Peaks: 19.5 TFLOP/s FP32,
# 156 TF32, 312 BF16/FP16 dense; HBM2e 2039 GB/s.
device:
  name: A100-SXM4-80GB
  peak_flops: {fp64: 19.5 TFLOP/s, fp32: 19.5 TFLOP/s, tf32: 156 TFLOP/s, fp16: 312 TFLOP/s, bf16: 312 TFLOP/s}
  memory: 80 GB
  memory_bandwidth: 2039 GB/s
  efficiency: [[1e6, 0.01], [1e7, 0.05], [1e8, 0.2], [1e9, 0.45], [1e10, 0.6], [1e11, 0.7]]
devices_per_node: 8
nodes: 140
network:
  - {name: nvswitch, alpha: 8 us, bandwidth: 300 GB/s, ranks: node}
  - {name: leaf, alpha: 2 us, bandwidth: 25 GB/s, links: 8, ranks: 160}
  - {name: spine, alpha: 3 us, bandwidth: 25 GB/s, links: 160, ranks: all}
)";

// Hopper (GH100) peaks, shared by the H100 SXM and the H200: dense BF16 ~990 TFLOP/s; ~790-798
// TFLOP/s measured for a large bf16 matrix product on one H200 and on one H100 (shared/reference,
// the device tool's KINDS.md), hence the 0.8 ceiling of the curve.
const char* const kHopperPeaksAndCurve =
    R"(  peak_flops: {fp64: 67 TFLOP/s, fp32: 67 TFLOP/s, tf32: 495 TFLOP/s, fp16: 990 TFLOP/s, bf16: 990 TFLOP/s, fp8: 1979 TFLOP/s}
  efficiency: [[1e7, 0.02], [1e8, 0.1], [1e9, 0.35], [1e10, 0.6], [1e11, 0.75], [1e12, 0.8]]
)";

// H200: 141 GB HBM3e at 4.8 TB/s, NVLink 4 through NVSwitch at 900 GB/s per GPU bidirectional,
// 8x 400 Gb/s NDR per node (recalled).
const std::string kH200Device = std::string(R"(device:
  name: H200-SXM-141GB
  memory: 141 GB
  memory_bandwidth: 4.8 TB/s
)") + kHopperPeaksAndCurve + "devices_per_node: 8\n";

// H100 SXM: 80 GB HBM3 at 3.35 TB/s, the same NVLink 4 / NVSwitch as the H200 (recalled).
const std::string kH100Device = std::string(R"(device:
  name: H100-SXM-80GB
  memory: 80 GB
  memory_bandwidth: 3.35 TB/s
)") + kHopperPeaksAndCurve + "devices_per_node: 8\n";

const std::string kH100 = std::string(R"(name: h100
description: one HGX H100 node; 8x H100 SXM 80 GB, NVLink 4 through NVSwitch
)") + kH100Device + R"(nodes: 1
network:
  - {name: nvswitch, alpha: 5 us, bandwidth: 450 GB/s, ranks: node}
)";

const std::string kH200 = std::string(R"(name: h200
description: one HGX H200 node; 8x H200 141 GB, NVLink 4 through NVSwitch
)") + kH200Device + R"(nodes: 1
network:
  - {name: nvswitch, alpha: 5 us, bandwidth: 450 GB/s, ranks: node}
)";

const std::string kH200Pod = std::string(R"(name: h200-pod
description: 128 HGX H200 nodes (1024 GPUs); NVSwitch inside a node, 8x 400 Gb/s NDR InfiniBand per node
)") + kH200Device + R"(nodes: 128
network:
  - {name: nvswitch, alpha: 5 us, bandwidth: 450 GB/s, ranks: node}
  - {name: leaf, alpha: 2 us, bandwidth: 400 Gbit/s, links: 8, ranks: 256}
  - {name: spine, alpha: 3 us, bandwidth: 400 Gbit/s, links: 256, ranks: all}
)";

const char* const kLocal = R"(name: local
description: this machine; one device per CPU core, ranks talk through shared memory
# Measured on the project's 2-core AVX-512 VMs (ENVIRONMENT.md): OpenBLAS matrix products reach
# 100-175 GFLOP/s per core; MPI_Allreduce of 4 KB takes ~4 us and 64 MB ~18 ms between 2 ranks.
# devices_per_node and memory are read from the host. Refine with `paraxis calibrate`.
device:
  name: CPU core
  peak_flops: {fp64: 75 GFLOP/s, fp32: 150 GFLOP/s}
  memory: auto
  memory_bandwidth: 10 GB/s
  efficiency: [[1e5, 0.1], [1e6, 0.3], [1e7, 0.5], [1e8, 0.6], [1e9, 0.65]]
  receives_by_copy: true
  split_keeps_rate: true
devices_per_node: auto
nodes: 1
network:
  - {name: shared-memory, alpha: 2 us, bandwidth: 4 GB/s, ranks: node}
)";

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all{{"abci", kAbci},     {"summit", kSummit},
                                       {"dgx1-v100", kDgx1}, {"dgx-a100", kDgxA100},
                                       {"h100", kH100},     {"h200", kH200},     {"h200-pod", kH200Pod},
                                       {"local", kLocal}};
  return all;
}

namespace {

const Preset* findPreset(const std::string& name) {
  for (const Preset& preset : presets()) {
    if (preset.name == name) return &preset;
  }
  return nullptr;
}

// Throws unless nameOrPath names a file.
void requireFile(const std::string& nameOrPath) {
  const bool looksLikeFile = nameOrPath.find('/') != std::string::npos ||
                             nameOrPath.ends_with(".yaml") || nameOrPath.ends_with(".yml");
  if (looksLikeFile || std::filesystem::exists(nameOrPath)) return;
  std::vector<std::string> names;
  for (const Preset& preset : presets()) names.push_back(preset.name);
  throw NotFoundError(fmt::format("unknown cluster '{}': the presets are {} (or give a .yaml file)",
                                  nameOrPath, fmt::join(names, ", ")));
}

}  // namespace

Cluster loadCluster(const std::string& nameOrPath) {
  if (const Preset* preset = findPreset(nameOrPath)) return loadClusterText(preset->yaml, "preset " + preset->name);
  requireFile(nameOrPath);
  return loadClusterFile(nameOrPath);
}

std::string clusterText(const std::string& nameOrPath) {
  if (const Preset* preset = findPreset(nameOrPath)) return preset->yaml;
  requireFile(nameOrPath);
  std::ifstream in(nameOrPath);
  if (!in) throw NotFoundError(fmt::format("{}: cannot read the cluster file", nameOrPath));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace paraxis::hw
