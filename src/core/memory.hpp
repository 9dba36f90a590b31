#pragma once
// Process-wide allocator policy, applied once at the start of main().
namespace paraxis {

// Keeps freed memory in the process instead of returning it to the OS. First-touch memory
// on the project's VMs is ~100x slower than warm memory (ENVIRONMENT.md, trap 1), and glibc
// would otherwise unmap every large block on free, so each big tensor would fault again.
void keepFreedMemory();

}  // namespace paraxis
