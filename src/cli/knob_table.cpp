#include "cli/context.hpp"

#include <fmt/format.h>

#include "comm/communicator.hpp"
#include "core/gradient_comm.hpp"
#include "core/thread_slice.hpp"

namespace paraxis::cli {

const std::vector<KnobSpec>& knobTable() {
  const GradientComm d;  // the gradient knobs' defaults are GradientComm's own
  static const std::vector<KnobSpec> table{
      {"keep_freed_memory", KnobType::kBool, "true",
       "keep freed memory (heap blocks, large tensor blocks) in the process instead of returning it to the OS (first-touch "
       "memory is slow on VMs)"},
      {"threads", KnobType::kInt, "0",
       "torch intra-op threads per rank; 0 = hardware threads / ranks on the host", 0, 1024},
      {"json_indent", KnobType::kInt, "2", "indentation of --json output; -1 for one line", -1, 16},
      {"comm_deadline", KnobType::kSeconds, fmt::format("{:g} s", comm::kDefaultDeadlineSeconds),
       "how long any rank waits in a communication call before failing with the call named", 0.01, 86400},
      {"comm_verify", KnobType::kBool, "false",
       "exchange a fingerprint of every collective call and fail when ranks disagree"},
      {"wire_conversion_path", KnobType::kString, "auto",
       "the fp16/bf16 wire's conversion kernels: auto (the fastest this CPU runs), avx512, avx2 or scalar", 0, 0,
       {"auto", "avx512", "avx2", "scalar"}},
      {"comm_thread_slice", KnobType::kSeconds, "100 us",
       "the time slice communication threads ask Linux for (6.12 and later), so that one woken while the cores compute "
       "runs within it instead of after the running thread's slice; 0 keeps the kernel's default (clamped to 100 us-100 ms)",
       0, core::kLongestThreadSlice},
      {"progress_interval", KnobType::kSeconds, "10 s",
       "seconds between train's progress lines where it cannot redraw one (a file, a pipe, any rank under mpirun)",
       0.1, 86400},
      // The gradient path's defaults (Horovod's HOROVOD_FUSION_THRESHOLD, _CYCLE_TIME, ...): a
      // strategy file overrides them, and the command line both.
      {"fusion_bytes", KnobType::kBytes, fmt::format("{:.0f}", d.fusionBytes),
       "the gradient fusion threshold, bytes (--fusion-bytes)", 1, 1e12},
      {"first_bucket_bytes", KnobType::kBytes, fmt::format("{:.0f}", d.firstBucketBytes),
       "the first fusion bucket, bytes (--first-bucket-bytes)", 1, 1e12},
      {"cycle", KnobType::kSeconds, fmt::format("{:g} s", d.cycleSeconds),
       "the negotiation cycle (--cycle; Horovod's cycle time)", 1e-6, 3600},
      {"grouping", KnobType::kString, groupingName(d.grouping), "gradient groups (--grouping)", 0, 0,
       {"fusion", "per-layer", "groups"}},
      {"reduce_order", KnobType::kString, orderName(d.order), "the order groups are reduced in (--reduce-order)", 0, 0,
       {"fifo", "priority"}},
      {"wire", KnobType::kString, wireName(d.wire), "gradients on the wire (--wire; fp16 is --fp16-gradients)", 0, 0,
       {"fp32", "fp16", "bf16", "chunk-sparse"}},
      {"debug", KnobType::kBool, "false",
       "print an internal error whole (LibTorch's trace included) instead of its first line"},
  };
  return table;
}

}  // namespace paraxis::cli
