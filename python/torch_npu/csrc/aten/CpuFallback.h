// The CPU fallback: every aten op without an NPU kernel runs its CPU kernel on
// zero-copy CPU aliases of the NPU tensors, after the stream has drained.
#pragma once

#include <ATen/core/stack.h>

#include <cstdint>
#include <map>
#include <string>

namespace c10 {
class OperatorHandle;
}

namespace torch_npu {

// Runs `op` on the CPU over aliases of its NPU arguments, counted and warned once per op:
// also the eager dispatcher's path for ops the compiler cannot build, which passes the
// compiler's `reason` so the warning says why.
void cpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack, const std::string& reason = "");

// Counts (and warns once for) a call of `op` that ran on the CPU outside cpuFallback: the eager
// dispatcher's call queued before its kernel was built, whose build then failed (csrc/eager/CompileMiss).
void countFallbackCall(const std::string& op, const std::string& reason);

// The argument of `schemaName` ("aten::index") that may hold CPU tensors with elements, as torch.cuda's
// kernel takes them: "indices" for the indexing ops, "*" for copies (every argument), "" for none.
const std::string& cpuTensorArgument(const std::string& schemaName);

// Calls per op ("aten::add.Tensor" -> n) that took the fallback since the last reset.
std::map<std::string, int64_t> fallbackCounts();
void resetFallbackCounts();

}  // namespace torch_npu
