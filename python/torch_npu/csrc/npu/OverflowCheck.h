// The overflow flags of torch.npu.get_npu_overflow_flag / clear_npu_overflow_flag.
//
// A 910B records an AI-core overflow in a per-device status register when torch_npu arms it:
// always in saturation mode (INF_NAN_MODE_FORCE_DISABLE=1), in the default INF_NAN mode only
// with FORCE_OVERFLOW_CHECK=1. The simulated kernels have no status register, so the check
// runs beside them: while armed, every compiled kernel's (and CPU-fallback op's) floating-point
// results are scanned for inf/nan by a host task on its stream, right after it; one found sets
// the device's sticky flag and, in saturation mode, is saturated as the 910B's vector unit
// would have (inf to the dtype's max, nan to 0). Arming costs one pass over each float result
// per op, which is why, as on a 910B, the default mode does not arm it.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Stream.h>

#include <atomic>
#include <vector>

namespace torch_npu {

extern std::atomic<bool> overflowCheckOn;

inline bool overflowCheckArmed() { return overflowCheckOn.load(std::memory_order_relaxed); }

// Queues the scan of `results` on `stream` (after what is queued there already).
void checkResultsForOverflow(const std::vector<at::Tensor>& results, c10::Stream stream);

}  // namespace torch_npu
