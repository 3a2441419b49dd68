// The overflow flags of torch.npu.get_npu_overflow_flag / clear_npu_overflow_flag.
//
// A 910B in saturation mode sets a per-device status bit when an AI-core op overflows. The
// simulated kernels have no status register, so the check happens beside them: while the
// check is armed, every compiled kernel's floating-point results are scanned for inf/nan by
// a host task on the kernel's stream, right after it; one found sets the device's sticky
// flag. Arming costs one pass over each float result per op, so it is off until the first
// get/clear call (the loss-scaler pattern: clear, run, read), torch_npu's
// npu.overflow.set_overflow_check(True), or TORCH_NPU_OVERFLOW_CHECK=1 (armed from the start).
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
