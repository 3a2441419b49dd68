// The miss path: ask Python (torch_npu.eager.miss) for a kernel for one call, load it.
#pragma once

#include <memory>
#include <string>

#include "torch_npu/csrc/eager/KernelCache.h"

namespace pybind11 {
class handle;
}

namespace torch_npu::eager {

struct MissResult {
  std::shared_ptr<const CacheEntry> entry;  // Kernel or Unsupported
  std::vector<int> bakedArgs;               // arguments whose values the kernel was built for
};

// The torch dtype of a compiled kernel's MLIR element type ("f32" -> Float); raises for others.
c10::ScalarType dtypeFromMlir(const std::string& name);
// The kernel `symbol` of the compiled library at `path`, loaded once for the life of the process.
aclrtKernelFunc loadKernel(const std::string& path, const std::string& symbol);

// The launch list of a npu_mlir.tools.compile_protocol.KernelRecord (launches, temps, outputs, path),
// each launch's library loaded; the dispatch fields are the caller's. Needs the GIL.
void readLaunchList(const pybind11::handle& record, KernelRecord& out);

// Takes the GIL. `key` is the call's structural key; compile time is added to the op's stats.
MissResult compileMiss(const OpInfo& info, const torch::jit::Stack& stack, size_t argBase, const std::string& key);

}  // namespace torch_npu::eager
