#pragma once
// The two clocks the compute bench reads: the wall's and the calling thread's CPU time. Where a node's ranks
// outnumber its cores (the netns hosts: 4 ranks on this project's 2-core VM), a rank waits for a core in the
// middle of its work and a wall clock counts the wait as the work's; the thread's own CPU clock does not.

namespace paraxis::core {

// Seconds of CPU the calling thread has run (CLOCK_THREAD_CPUTIME_ID); a negative value where
// the system has no such clock. A reading is a system call, 0.5-0.75 us on this project's VM
// where the wall clock's takes 0.05: a few per layer add ~1 % to a ResNet-18 step at one sample.
double threadCpuSeconds();

// Seconds on a steady wall clock (from an arbitrary start): what a computation took, waits
// for a core included.
double wallSeconds();

}  // namespace paraxis::core
