// The eager dispatcher: the PrivateUse1 kernel of every op listed in
// aten/npu_native_functions.yaml. A call is keyed (KernelCache.h); a hit allocates the
// outputs and launches the cached kernel on the current stream without Python or the
// GIL; a miss asks torch_npu.eager.miss (under the GIL) for a kernel built by a compile
// worker, loads it and caches it; an op the compiler cannot build runs on the CPU fallback.
#pragma once

#include <ATen/core/stack.h>

#include <cstdint>
#include <memory>
#include <string>

#include "torch_npu/csrc/eager/KernelCache.h"

namespace c10 {
class OperatorHandle;
}

namespace torch_npu::eager {

// The entry for the call on `stack` whose structural key is `key`: from the cache (a hit, counted on
// the op), or compiled now (a miss). Multi-tensor launches (csrc/aten/MultiTensorApply.h) resolve
// their records through it too. With `mayDefer` (a caller that runs pending records, see
// CompileMiss.h), a miss the call can wait for on its stream returns a pending record while it builds.
std::shared_ptr<const CacheEntry> resolve(const OpInfo& info, const torch::jit::Stack& stack, size_t argBase,
                                          const std::string& key, bool mayDefer = false);

// The 8-byte ABI slot of a scalar parameter: a number, or a CPU 0-d tensor read on the host.
uint64_t paramSlot(const c10::IValue& v, bool isFloat);

// Boxed kernel: consumes the op's arguments from `stack` and pushes its returns.
void compiledKernel(const c10::OperatorHandle& op, torch::jit::Stack* stack);

// Boxed kernel of a metadata-only view (transpose, permute, ...): counts the call on the "view"
// path and runs the op's backend-independent kernel (registered for every backend, CPU's entry).
void viewKernel(const c10::OperatorHandle& op, torch::jit::Stack* stack);

}  // namespace torch_npu::eager
