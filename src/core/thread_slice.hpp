#pragma once
// The time slice communication threads ask Linux for. Linux's scheduler (EEVDF, 6.6 and later)
// lets a running thread finish its slice (1.4 ms on this project's 2-core VM) before a thread
// woken on its core runs, unless the woken one's own slice is shorter (a per-task slice, 6.12
// and later). A gradient reduction is a chain of such wake-ups across three threads and two
// ranks (backward marks a group ready, the reduction thread posts it, the progress thread runs
// it, the reduction thread and then the next forward are told), and with every core busy
// computing each link waited up to a slice: a 208 KB group whose allreduce took 32 us was
// reported done 0.6 ms later, and the next forward waited for it.
//
// Process-wide, like the trace: set once at start-up from the comm_thread_slice knob, applied by
// each communication thread to itself when it starts.

#include <optional>
#include <string>

namespace paraxis::core {

// The slices the kernel gives (it clamps a request to them), seconds: the knob, a cluster file's
// implementation.comm_thread_slice and a train report's machine.comm_thread_slice_s take 0 (the
// kernel's own) or up to the largest.
inline constexpr double kShortestThreadSlice = 100e-6;
inline constexpr double kLongestThreadSlice = 0.1;

// "a 100 us time slice", or "the kernel's own time slice" for 0: how reports name a slice.
std::string threadSliceText(double seconds);

// The slice to ask for, seconds; 0 keeps the kernel's default. The kernel clamps a slice to
// [kShortestThreadSlice, kLongestThreadSlice].
void setCommThreadSlice(double seconds);
double commThreadSlice();

// Asks the kernel to run the calling thread with commThreadSlice() and reads back what it got.
// Returns the slice in effect for the thread when it is its own (seconds), or 0: none asked, or
// a kernel without per-task slices (older kernels accept the request and ignore it; the read-
// back tells), or not Linux.
double applyCommThreadSlice();

// The slice the communication threads of this process ran with (what the last to apply it read
// back: 0 for the kernel's own), for reports; unset when no communication thread ran.
std::optional<double> commThreadSliceInEffect();

}  // namespace paraxis::core
