// Tasks other than events: kernel launches, host functions, copies and fills.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core_pool.h"
#include "device.h"
#include "error.h"
#include "graph_capture.h"
#include "memory.h"
#include "npurt/device_control.h"
#include "profiling_hooks.h"
#include "stream.h"

namespace npurt {
namespace {

// Packed kernel arguments are pointers and scalars; anything this large is a caller bug.
constexpr size_t kMaxArgsSize = size_t(64) << 10;

const char* kindName(aclrtMemcpyKind kind) {
  switch (kind) {
    case ACL_MEMCPY_HOST_TO_HOST: return "HOST_TO_HOST";
    case ACL_MEMCPY_HOST_TO_DEVICE: return "HOST_TO_DEVICE";
    case ACL_MEMCPY_DEVICE_TO_HOST: return "DEVICE_TO_HOST";
    case ACL_MEMCPY_DEVICE_TO_DEVICE: return "DEVICE_TO_DEVICE";
  }
  return "?";
}

// A launch's argument bytes, copied when it is queued and owned by its task: inline up to
// kInlineArgs bytes (every eager kernel's slots), on the heap above. A loop of small launches
// paid an allocation for them on every call.
class ArgBytes {
 public:
  static constexpr size_t kInlineArgs = 256;

  ArgBytes(const void* args, size_t size) : size_(size) {
    if (size <= kInlineArgs) {
      if (size > 0) std::memcpy(inline_.data(), args, size);
    } else {
      uint8_t* heap = new uint8_t[size];
      std::memcpy(heap, args, size);
      heap_.reset(heap);
    }
  }
  const void* data() const { return size_ == 0 ? nullptr : heap_ ? heap_.get() : inline_.data(); }

 private:
  size_t size_;
  std::array<uint8_t, kInlineArgs> inline_;
  std::shared_ptr<const uint8_t[]> heap_;
};

// Kernel names are kept once for the life of the process (a process launches a bounded set of
// kernels): a task holds a pointer to its name, not a copy. The calling thread remembers the names
// it interned by the caller's pointer (the eager path passes its cached record's symbol, so a
// model's loop of distinct kernels skips the shared set's mutex and hash); the text is compared too,
// as a caller's buffer may hold another name later.
const char* internName(const char* name) {
  if (name == nullptr) return "<unnamed>";
  struct Seen {
    const char* caller = nullptr;
    const char* interned = nullptr;
  };
  thread_local std::array<Seen, 64> seen;
  Seen& slot = seen[(reinterpret_cast<uintptr_t>(name) >> 4) % seen.size()];
  if (slot.caller == name && std::strcmp(slot.interned, name) == 0) return slot.interned;
  static std::mutex* mutex = new std::mutex();
  static auto* names = new std::unordered_set<std::string>();
  std::lock_guard<std::mutex> lock(*mutex);
  slot = Seen{name, names->insert(name).first->c_str()};
  return slot.interned;
}

// A short kernel's blocks run one after the other on the stream's worker. Handing blocks to the
// AI-core pool costs a futex wake of a sleeping helper, its context switch and the wait for its
// last block: on this host more CPU than a kernel of a few tens of microseconds saves by running
// on two cores (a Llama training step's 358 launches spent ~1 ms of its ~11 ms of CPU there, most
// of its kernels taking under 50 us). So each worker remembers, per kernel, what its last run cost
// in core time (its wall time times the cores it ran on); below kSerialBelowNs the next run takes
// no helper. A kernel not yet run, or a long one, is spread over the pool as before.
constexpr int64_t kSerialBelowNs = 100'000;

int64_t& lastCoreTimeNs(aclrtKernelFunc kernel) {
  thread_local std::unordered_map<aclrtKernelFunc, int64_t> lastCost;
  return lastCost.try_emplace(kernel, int64_t(-1)).first->second;
}

BlockFailure runKernelBlocks(aclrtKernelFunc kernel, uint32_t blockDim,
                             const std::function<int32_t(uint32_t)>& block) {
  int64_t& cost = lastCoreTimeNs(kernel);
  const bool serial = blockDim == 1 || (cost >= 0 && cost < kSerialBelowNs);
  const int64_t start = steadyNowNs();
  BlockFailure failure;
  if (serial) {
    for (uint32_t idx = 0; idx < blockDim; ++idx) {
      int32_t rc = block(idx);
      if (rc != 0 && failure.code == 0) failure = BlockFailure{rc, idx};
    }
  } else {
    failure = runBlocks(blockDim, block);
  }
  const int64_t cores = serial ? 1 : std::min<int64_t>(blockDim, std::max(1u, std::thread::hardware_concurrency()));
  cost = (steadyNowNs() - start) * cores;
  return failure;
}

// Device-side pointers must lie, with all `count` bytes, inside one device
// allocation; host-side pointers must not point into device memory.
aclError checkSide(const void* ptr, size_t count, bool device, const char* role, const char* caller,
                   aclrtMemcpyKind kind) {
  MemoryRange range = findMemoryRange(ptr);
  uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
  if (device && range.location != ACL_MEM_LOCATION_DEVICE) {
    return fail(ACL_ERROR_INVALID_PARAM, std::string(caller) + ": " + role + " is not device memory (kind " +
                                             kindName(kind) + ")");
  }
  if (device && count > range.base + range.size - address) {
    return fail(ACL_ERROR_INVALID_PARAM, std::string(caller) + ": " + std::to_string(count) + " bytes at " + role +
                                             " run past the end of its device allocation");
  }
  if (!device && range.location == ACL_MEM_LOCATION_DEVICE) {
    return fail(ACL_ERROR_INVALID_PARAM, std::string(caller) + ": " + role + " is device memory but kind is " +
                                             kindName(kind));
  }
  return ACL_SUCCESS;
}

aclError checkCopy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                   const char* caller) {
  if (kind < ACL_MEMCPY_HOST_TO_HOST || kind > ACL_MEMCPY_DEVICE_TO_DEVICE) {
    return fail(ACL_ERROR_INVALID_PARAM, std::string(caller) + ": unknown copy kind " + std::to_string(kind));
  }
  if (count > destMax) {
    return fail(ACL_ERROR_INVALID_PARAM, std::string(caller) + ": count " + std::to_string(count) +
                                             " exceeds destMax " + std::to_string(destMax));
  }
  if (count == 0) return ACL_SUCCESS;
  if (dst == nullptr || src == nullptr) {
    return fail(ACL_ERROR_INVALID_PARAM, std::string(caller) + ": dst or src is null");
  }
  bool dstDevice = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
  bool srcDevice = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
  if (aclError rc = checkSide(dst, count, dstDevice, "dst", caller, kind)) return rc;
  return checkSide(src, count, srcDevice, "src", caller, kind);
}

}  // namespace
}  // namespace npurt

using npurt::fail;

extern "C" {

aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind) {
  if (aclError rc = npurt::checkCopy(dst, destMax, src, count, kind, "aclrtMemcpy")) return rc;
  if (aclError rc = npurt::captureCheckSafe("aclrtMemcpy")) return rc;
  // Recorded on the current device's default stream lane; its name tells it from the copy tasks.
  npurtProfiledTask* profiled = npurtProfilerBeginTask(NPURT_TASK_MEMCPY, "aclrtMemcpy", nullptr, count, kind);
  npurtProfilerTaskStarted(profiled);
  if (count > 0) std::memmove(dst, src, count);
  npurtProfilerTaskEnded(profiled, ACL_SUCCESS);
  return ACL_SUCCESS;
}

aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream) {
  if (aclError rc = npurt::checkCopy(dst, destMax, src, count, kind, "aclrtMemcpyAsync")) return rc;
  if (aclError rc = npurt::resolveStream(stream, &stream, "aclrtMemcpyAsync")) return rc;
  aclError captured = ACL_SUCCESS;
  if (npurt::capturing(stream) && npurt::captureCopy(stream, dst, src, count, kind, &captured)) return captured;
  npurt::TaskInfo info{NPURT_TASK_MEMCPY, nullptr, count, kind};
  return npurt::enqueue(
      stream,
      [dst, src, count] {
        if (count > 0) std::memmove(dst, src, count);
        return ACL_SUCCESS;
      },
      info);
}

aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream) {
  if (count > maxCount) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtMemsetAsync: count " + std::to_string(count) + " exceeds maxCount " +
                                             std::to_string(maxCount));
  }
  if (count > 0) {
    if (devPtr == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtMemsetAsync: devPtr is null");
    aclError rc = npurt::checkSide(devPtr, count, true, "devPtr", "aclrtMemsetAsync", ACL_MEMCPY_HOST_TO_DEVICE);
    if (rc != ACL_SUCCESS) return rc;
  }
  if (aclError rc = npurt::resolveStream(stream, &stream, "aclrtMemsetAsync")) return rc;
  aclError captured = ACL_SUCCESS;
  if (npurt::capturing(stream) && npurt::captureFill(stream, devPtr, value, count, &captured)) return captured;
  npurt::TaskInfo info{NPURT_TASK_MEMSET, nullptr, count};
  return npurt::enqueue(
      stream,
      [devPtr, value, count] {
        if (count > 0) std::memset(devPtr, value, count);
        return ACL_SUCCESS;
      },
      info);
}

aclError aclrtLaunchKernel(aclrtKernelFunc kernel, uint32_t blockDim, const void* args, size_t argsSize,
                           const char* name, aclrtStream stream) {
  if (kernel == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtLaunchKernel: kernel is null");
  if (blockDim == 0) return fail(ACL_ERROR_INVALID_PARAM, "aclrtLaunchKernel: blockDim is 0");
  if (argsSize > npurt::kMaxArgsSize) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtLaunchKernel: argsSize " + std::to_string(argsSize) + " exceeds the " +
                                             std::to_string(npurt::kMaxArgsSize) + "-byte argument limit");
  }
  if (args == nullptr && argsSize > 0) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtLaunchKernel: args is null but argsSize is " + std::to_string(argsSize));
  }
  if (aclError rc = npurt::resolveStream(stream, &stream, "aclrtLaunchKernel")) return rc;
  aclError captured = ACL_SUCCESS;
  if (npurt::capturing(stream) && npurt::captureKernel(stream, kernel, blockDim, args, argsSize, name, &captured)) {
    return captured;
  }
  const char* label = npurt::internName(name);
  npurt::TaskInfo info{NPURT_TASK_KERNEL, label, 0, -1, blockDim};
  return npurt::enqueue(
      stream,
      [kernel, blockDim, packed = npurt::ArgBytes(args, argsSize), label, device = stream->device] {
        const void* data = packed.data();
        // Past the operator execution timeout, or once stop_device stopped the device, blocks not
        // yet started are skipped (a block already running finishes: compiled code never polls).
        const int64_t deadline = npurt::kernelDeadlineNs();
        npurt::BlockFailure failure = npurt::runKernelBlocks(kernel, blockDim, [&](uint32_t idx) {
          if (deadline != 0 && npurt::steadyNowNs() > deadline) return int32_t(-1);
          if (npurt::deviceStopped(device)) return int32_t(-1);
          return kernel(data, idx, blockDim);
        });
        auto kernelName = [label] { return std::string("kernel '") + label + "'"; };  // for an error only
        if (npurt::deviceStopped(device)) return npurt::stoppedDeviceError(device, kernelName().c_str());
        if (deadline != 0 && npurt::steadyNowNs() > deadline) {
          return fail(ACL_ERROR_RT_AICORE_TIMEOUT, kernelName() + " ran past the operator execution timeout of " +
                                                       std::to_string(npurtOpExecuteTimeoutMs()) + " ms");
        }
        if (failure.code == 0) return ACL_SUCCESS;
        const char* why = failure.code == NPURT_KERNEL_ASSERT_FAILED
                              ? ": a device-side assertion failed (an index out of range for the dimension it "
                                "indexes, or an integer division by zero; the kernel printed which check). Check "
                                "the indices and divisors passed to the op"
                              : "";
        return fail(ACL_ERROR_RT_AICORE_EXCEPTION, kernelName() + " failed in block " +
                                                       std::to_string(failure.blockIdx) + " of " +
                                                       std::to_string(blockDim) + " with code " +
                                                       std::to_string(failure.code) + why);
      },
      info);
}

aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void* userData) {
  if (fn == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtLaunchHostFunc: fn is null");
  if (aclError rc = npurt::resolveStream(stream, &stream, "aclrtLaunchHostFunc")) return rc;
  // Captured, it runs again at each replay with the same userData (as a CUDA host node).
  aclError captured = ACL_SUCCESS;
  if (npurt::capturing(stream) && npurt::captureHostFunc(stream, fn, userData, nullptr, &captured)) return captured;
  return npurt::enqueue(
      stream,
      [fn, userData] {
        int32_t rc = fn(userData);
        if (rc == 0) return ACL_SUCCESS;
        return fail(ACL_ERROR_RT_INTERNAL_ERROR, "host function on the stream failed with code " + std::to_string(rc));
      },
      npurt::TaskInfo{NPURT_TASK_HOST_FUNC});
}

}  // extern "C"
