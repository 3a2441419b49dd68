// The miss path: ask Python (torch_npu.eager.miss) for a kernel for one call, load it.
//
// A miss need not block the host thread until its kernel is built. When the call can wait on its
// stream (deferrable()), Python plans it, hands the build to a compile worker in the background and
// answers at once with the results' meta shapes: the dispatcher allocates the results and queues a
// stand-in launch (launchPending) that, in stream order, waits for the build and runs the kernel, or
// runs the op's CPU kernel into the same results if the build failed. The host goes on to the next op,
// whose miss goes to another worker. When the build ends, its entry replaces the pending one: later
// calls take the hit path (or the CPU fallback).
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include "torch_npu/csrc/eager/KernelCache.h"

namespace pybind11 {
class handle;
}

namespace torch_npu::eager {

// A kernel being built in the background for one key (KernelRecord::pending).
struct PendingCompile {
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;    // the build ended: `entry` is set
  bool stored = false;  // the dispatcher stored the pending entry (the finished one replaces it)
  std::shared_ptr<const CacheEntry> entry;  // Kernel, or Unsupported (the waiting calls run on the CPU)
  std::string storeKey;                     // the key the finished entry is stored under
  std::shared_ptr<const KernelRecord> planned;  // the pending record: results as the plan shaped them
};

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

// Takes the GIL. `key` is the call's structural key; compile time is added to the op's stats. With
// `defer`, the answer may be a pending record (KernelRecord::pending) whose build goes on meanwhile.
MissResult compileMiss(const OpInfo& info, const torch::jit::Stack& stack, size_t argBase, const std::string& key,
                       bool defer = false);

// Whether this call may be queued before its kernel is built: TORCH_NPU_ASYNC_MISSES is 1, the
// calling thread does not hold the GIL (a later synchronize under it would wait for a build that
// needs it), and no NPU tensor argument is stored in an internal format (the CPU fallback of those
// converts on the host).
bool deferrable(const OpInfo& info, const torch::jit::Stack& stack, size_t argBase);

// The dispatcher stored `entry` (pending) under its key: from now on the finished entry replaces it.
void pendingStored(const CacheEntry& entry);

// Waits (without the GIL) for a pending build; returns the finished entry.
std::shared_ptr<const CacheEntry> awaitCompile(PendingCompile& pending);

// Queues the call of a pending record on `stream`: a stand-in launch that waits for the build, then
// runs its kernels (or the op's CPU kernel) on `inputs` / `results` / `params`, as launchRecord would.
// A stream being captured cannot hold it: the build is awaited here and its kernels queued instead.
void launchPending(const c10::OperatorHandle& op, const OpInfo& info, const KernelRecord& record,
                   const torch::jit::Stack& stack, size_t argBase, c10::ArrayRef<at::Tensor> inputs,
                   c10::ArrayRef<at::Tensor> results, c10::ArrayRef<uint64_t> params, aclrtStream stream);

}  // namespace torch_npu::eager
