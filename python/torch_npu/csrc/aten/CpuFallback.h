// The CPU fallback: every aten op without an NPU kernel runs its CPU kernel on
// zero-copy CPU aliases of the NPU tensors, after the stream has drained.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace torch_npu {

// Calls per op ("aten::add.Tensor" -> n) that took the fallback since the last reset.
std::map<std::string, int64_t> fallbackCounts();
void resetFallbackCounts();

}  // namespace torch_npu
