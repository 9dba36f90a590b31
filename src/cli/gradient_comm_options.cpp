#include "cli/gradient_comm_options.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/ranges.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

namespace paraxis::cli {
namespace {

double bytesOption(const std::string& text, const char* option) {
  const auto bytes = units::parse(text, units::Quantity::kBytes);
  if (!bytes || *bytes <= 0) throw ConfigError(fmt::format("{}: expected a size such as 4MiB, found '{}'", option, text));
  return *bytes;
}

}  // namespace

GradientComm GradientCommFlags::apply(GradientComm c) const {
  if (noOverlap) c.overlap = false;
  if (grouping) c.grouping = groupingFromName(*grouping, "--grouping");
  if (groups) c.groups = *groups;
  if (fusion) c.fusionBytes = bytesOption(*fusion, "--fusion-bytes");
  if (firstBucket) c.firstBucketBytes = bytesOption(*firstBucket, "--first-bucket-bytes");
  if (order) c.order = orderFromName(*order, "--reduce-order");
  if (negotiation) c.negotiation = negotiationFromName(*negotiation, "--negotiation");
  if (cycle) c.cycleSeconds = *cycle;
  if (fp16 && wire && *wire != "fp16") throw ConfigError("--fp16-gradients: contradicts --wire " + *wire);
  if (fp16) c.wire = WireFormat::kF16;
  if (density) {
    c.density = *density;
    if (*density < 1 && !wire) c.wire = WireFormat::kChunkSparse;
  }
  if (wire) c.wire = wireFromName(*wire, "--wire");
  if (c.wire != WireFormat::kChunkSparse && !density) c.density = 1;
  if (allreduce) c.algorithm = gradientAlgorithmFromName(*allreduce, "--allreduce");
  c.validate("", GradientComm::Names::kCommandLine);
  return c;
}

GradientComm knobDefaults(const Knobs& k) {
  GradientComm c;
  c.fusionBytes = k.getDouble("fusion_bytes");
  c.firstBucketBytes = k.getDouble("first_bucket_bytes");
  c.cycleSeconds = k.getDouble("cycle");
  c.grouping = groupingFromName(k.getString("grouping"), "PARAXIS_GROUPING");
  c.order = orderFromName(k.getString("reduce_order"), "PARAXIS_REDUCE_ORDER");
  c.wire = wireFromName(k.getString("wire"), "PARAXIS_WIRE");
  return c;
}

void addGradientCommOptions(CLI::App& c, GradientCommFlags& f) {
  const GradientComm d;
  const std::string group = "Gradient communication";
  c.add_flag("--no-overlap", f.noOverlap, "reduce gradients after backward instead of during it")->group(group);
  c.add_option("--grouping", f.grouping,
               fmt::format("gradient groups: fusion, per-layer or groups (default {})", groupingName(d.grouping)))
      ->group(group);
  c.add_option("--groups", f.groups, fmt::format("groups for --grouping groups (default {})", d.groups))
      ->check(within(1, 1'000'000))
      ->group(group);
  c.add_option("--fusion-bytes", f.fusion, "fusion threshold (default 4MiB)")->group(group);
  c.add_option("--first-bucket-bytes", f.firstBucket, "the first fusion bucket (default 1MiB)")->group(group);
  c.add_option("--reduce-order", f.order,
               fmt::format("fifo (groups in backward order) or priority (the groups the next forward needs first, "
                           "chunk by chunk; the next forward overlaps the tail) (default {})",
                           orderName(d.order)))
      ->group(group);
  c.add_option("--negotiation", f.negotiation,
               fmt::format("none, centralized or decentralized (default {})", negotiationName(d.negotiation)))
      ->group(group);
  c.add_option("--cycle", f.cycle, fmt::format("negotiation cycle in seconds (default {})", d.cycleSeconds))
      ->check(aboveUpTo(0, 3600))
      ->group(group);
  c.add_option("--wire", f.wire, "gradients on the wire: fp32 (default), fp16, bf16 or chunk-sparse")->group(group);
  c.add_flag("--fp16-gradients", f.fp16, "the same as --wire fp16")->group(group);
  c.add_option("--allreduce", f.allreduce,
               "the gradient allreduce: auto (default: the oracle's pick in plan, the runtime's own in train), ring, "
               "recursive_doubling, rabenseifner or hierarchical (reduce-scatter inside each host, allreduce across, "
               "allgather inside)")
      ->group(group);
  c.add_option("--density", f.density, "chunk-sparse: fraction of gradient chunks sent (default 1)")
      ->check(aboveUpTo(0, 1))
      ->group(group);
}

}  // namespace paraxis::cli
