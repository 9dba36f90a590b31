#include "core/memory.hpp"

#include <malloc.h>

#include <climits>

namespace paraxis {

void keepFreedMemory() {
  // Serve large blocks from the heap (not fresh mmaps) and never trim the heap.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
  mallopt(M_TOP_PAD, 64 << 20);
}

}  // namespace paraxis
