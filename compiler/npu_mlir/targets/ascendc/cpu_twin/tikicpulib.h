// CANN's CPU-debug host header: GM buffers for ICPU_RUN_KF launches, as the CANN samples use them.
#pragma once

#include <cstdlib>

#include "kernel_operator.h"

namespace AscendC {
// GM for a CPU-debug launch: 32-byte aligned host memory.
inline void* GmAlloc(size_t size) { return std::aligned_alloc(32, (size + 31) / 32 * 32); }
inline void GmFree(void* ptr) { std::free(ptr); }
}  // namespace AscendC
