// The eager dispatcher's per-op kernel cache: a key from the call's structure, and the
// record of the compiled kernel that serves every call with that key.
//
// A key holds the operator name, each tensor's dtype / sizes / strides, and every
// structural argument (ints, int lists, bools, dtypes, strings, None-ness). Scalar values
// are left out: they are kernel parameters, so `x * lr` never recompiles when `lr`
// changes. A value the compiler could not turn into a parameter is "baked": its record
// says so, and the calls are keyed a second time with those values.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/stack.h>
#include <c10/core/ScalarType.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "npurt/acl_rt.h"

namespace c10 {
class OperatorHandle;
}

namespace torch_npu::eager {

struct PendingCompile;  // CompileMiss.h

// Where a kernel argument comes from: argument `arg` of the call (element `element` of a
// tensor list, -1 otherwise).
struct ArgRef {
  int arg = 0;
  int element = -1;
};

struct OutputSpec {
  std::vector<int64_t> sizes;
  c10::ScalarType dtype = c10::ScalarType::Float;
  // Empty: row-major. Else the dense strides PyTorch gives the result (channels_last, permuted), in
  // whose memory order the kernel writes it (torch_npu.eager.plan.Plan.layouts).
  std::vector<int64_t> strides;
};

// Where an output goes: written into argument `ref` (arg -1: a fresh tensor); `resize` for out=.
struct OutputTarget {
  ArgRef ref{-1, -1};
  bool resize = false;
};

// One return of the op: argument `arg` itself (in-place, out=), or (arg -1) fresh outputs.
struct ReturnSpec {
  int arg = -1;
  std::vector<int> outputs;
  bool list = false;  // a Tensor[] return
};

// Where one ABI slot of a launch comes from: the call's tensor input, result or scalar
// parameter `index`, or the record's intermediate buffer `index`.
struct LaunchArg {
  enum class Kind : uint8_t { Input, Output, Temp, Param } kind = Kind::Input;
  int index = 0;
};

// One kernel of a record: its slots in the order of npu_mlir.targets.sim.abi (tensor
// arguments, results, scalar parameters).
struct Launch {
  aclrtKernelFunc fn = nullptr;
  uint32_t blockDim = 1;
  std::string symbol;
  std::vector<LaunchArg> args;
};

// A compiled call: the launch list the compiler made of it (npu_mlir.targets.launch_list)
// and how the call feeds it.
struct KernelRecord {
  std::vector<Launch> launches;    // empty: every result is empty, nothing to launch
  std::vector<int64_t> tempBytes;  // intermediates between launches, allocated per call
  bool pipeline = false;           // built by the ascend pipeline (tiled, with AscendC), else from linalg
  std::vector<ArgRef> inputs;
  std::vector<ArgRef> params;
  std::vector<bool> paramIsFloat;  // slot holds a double (else an int64)
  std::vector<OutputSpec> outputs;
  std::vector<OutputTarget> targets;  // per output (torch_npu.eager.plan.Plan.targets)
  std::vector<ReturnSpec> returns;    // per return of the op
  // Set while the kernel is built in the background: `launches` is empty, `outputs` are the plan's
  // (CompileMiss.h launchPending runs the call).
  std::shared_ptr<PendingCompile> pending;
};

// What a key resolves to.
struct CacheEntry {
  enum class Kind { Kernel, Baked, Unsupported } kind = Kind::Unsupported;
  std::shared_ptr<const KernelRecord> kernel;  // Kernel
  std::vector<int> bakedArgs;                  // Baked: re-key with these arguments' values
  std::string reason;                          // Unsupported: why the compiler refused it
};

// Per-op counters; read by torch_npu.npu.eager_stats().
struct OpStats {
  std::atomic<int64_t> hits{0};
  std::atomic<int64_t> misses{0};
  std::atomic<int64_t> compiled{0};  // calls that ran a compiled kernel
  std::atomic<int64_t> fallback{0};  // calls the dispatcher sent to the CPU fallback
  std::atomic<int64_t> view{0};      // metadata-only view calls
  std::atomic<int64_t> pipeline{0};  // compiled calls whose record came out of the ascend pipeline
  std::atomic<int64_t> compileMicros{0};

  // Why the last miss built its record from linalg rather than through the ascend pipeline.
  void noteLinalgReason(const std::string& reason) {
    std::lock_guard<std::mutex> lock(reasonMutex_);
    linalgReason_ = reason;
  }
  std::string linalgReason() const {
    std::lock_guard<std::mutex> lock(reasonMutex_);
    return linalgReason_;
  }

  // Why the last fallback call was not compiled (the compiler's or the key's reason).
  void noteFallbackReason(const std::string& reason) {
    std::lock_guard<std::mutex> lock(reasonMutex_);
    fallbackReason_ = reason;
  }
  std::string fallbackReason() const {
    std::lock_guard<std::mutex> lock(reasonMutex_);
    return fallbackReason_;
  }

 private:
  mutable std::mutex reasonMutex_;
  std::string fallbackReason_;
  std::string linalgReason_;
};

// Facts about an operator's schema the dispatcher needs on every call; computed once.
struct OpInfo {
  std::string name;  // "aten::add.Tensor"
  std::vector<bool> scalarLike;  // argument typed Scalar / float: a parameter candidate
  std::vector<bool> isOut;       // out= argument (not part of the key)
  bool pointwise = false;        // element i of the result reads only element i of each input
  int cpuIndices = -1;           // an indexing op's indices argument: CPU tensors there go to the device first
  mutable OpStats stats;  // counters change on every call; the schema facts never do
};

const OpInfo& opInfo(const c10::OperatorHandle& op);

// Appends the key of the call on `stack` (the op's arguments are its last entries);
// false if some argument can never be compiled (e.g. a non-scalar CPU tensor).
bool buildKey(const OpInfo& info, const torch::jit::Stack& stack, size_t argBase, std::string& key);
// Appends the values of `args` (for a Baked entry).
void appendBakedValues(const torch::jit::Stack& stack, size_t argBase, const std::vector<int>& args,
                       std::string& key);

// Queues the record's launches on `stream`: `inputs` / `results` / `params` are the call's, in
// record order; intermediates come from the device allocator. Counts a pipeline call.
void launchRecord(const OpInfo& info, const KernelRecord& record, c10::ArrayRef<at::Tensor> inputs,
                  c10::ArrayRef<at::Tensor> results, c10::ArrayRef<uint64_t> params, aclrtStream stream);

std::shared_ptr<const CacheEntry> lookup(const std::string& key);
void store(const std::string& key, std::shared_ptr<const CacheEntry> entry);
// Forgets every cached key (the disk cache is untouched); loaded libraries stay loaded.
void clearMemoryCache();
size_t cachedKeyCount();

// Snapshot of every op's counters, by op name.
struct StatsRow {
  int64_t hits, misses, compiled, fallback, view, pipeline;
  double compileMs;
  std::string fallbackReason, linalgReason;
};
std::map<std::string, StatsRow> statsSnapshot();
void resetStats();

}  // namespace torch_npu::eager
