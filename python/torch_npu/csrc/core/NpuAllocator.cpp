#include "torch_npu/csrc/core/NpuAllocator.h"

#include <c10/core/DeviceGuard.h>
#include <c10/core/StorageImpl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "npurt/acl_rt.h"
#include "npurt/caching_allocator.h"
#include "npurt/ipc.h"
#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/core/NpuDevice.h"
#include "torch_npu/csrc/core/NpuStream.h"
#include "torch_npu/csrc/profiler/NpuMemoryReport.h"

namespace torch_npu {
namespace {

void freeDeviceBlock(void* ptr) {
  // A deleter cannot throw; the runtime keeps the message for a later call.
  (void)npurt::cacheFree(ptr);
  profiler::reportFree(ptr);
}

// torch_npu's (and torch.cuda's) bound: no device has an exabyte, and rounding such a size overflows.
constexpr size_t kOneExaByte = size_t(1) << 60;

void copyStat(const npurt::Stat& from, c10::CachingDeviceAllocator::Stat& to) {
  to.current = from.current;
  to.peak = from.peak;
  to.allocated = from.allocated;
  to.freed = from.freed;
}

// The user's allocator once change_current_allocator swapped it in, and what each of
// its blocks was allocated with (its free function takes them back).
struct Pluggable {
  PluggableAlloc alloc = nullptr;
  PluggableFree free = nullptr;
  std::mutex mutex;
  std::unordered_map<void*, std::tuple<size_t, int, aclrtStream>> blocks;
};

Pluggable& pluggable() {
  static Pluggable* instance = new Pluggable();  // leaked: blocks may be freed at exit
  return *instance;
}

std::atomic<bool> deviceAllocatorUsed{false};

void freePluggableBlock(void* ptr) {
  Pluggable& p = pluggable();
  std::tuple<size_t, int, aclrtStream> info;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    auto it = p.blocks.find(ptr);
    if (it == p.blocks.end()) return;
    info = it->second;
    p.blocks.erase(it);
  }
  (void)npurt::cacheUnregisterExternal(ptr);
  p.free(ptr, std::get<0>(info), std::get<1>(info), std::get<2>(info));
}

c10::DataPtr allocatePluggable(size_t nbytes, c10::DeviceIndex device) {
  Pluggable& p = pluggable();
  void* ptr = nullptr;
  if (nbytes > 0) {
    aclrtStream stream = nativeStream(getCurrentStream(device));
    ptr = p.alloc(nbytes, device, stream);
    TORCH_CHECK_WITH(OutOfMemoryError, ptr != nullptr, "NPU out of memory. The pluggable allocator returned null for ",
                     nbytes, " bytes on device ", static_cast<int>(device), ".\n", ptaErr(ErrCode::MEMORY));
    aclError status = npurt::cacheRegisterExternal(ptr, nbytes, device);
    if (status != ACL_SUCCESS) p.free(ptr, nbytes, device, stream);
    NPU_CHECK_ACL(status);
    std::lock_guard<std::mutex> lock(p.mutex);
    p.blocks[ptr] = {nbytes, device, stream};
  }
  return {ptr, ptr, &freePluggableBlock, c10::Device(c10::DeviceType::PrivateUse1, device)};
}

class NpuAllocator final : public c10::DeviceAllocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override {
    c10::DeviceIndex device = currentDevice();
    checkNotForkedChild();
    markInitialized(device);
    TORCH_CHECK_WITH(OutOfMemoryError, nbytes < kOneExaByte,
                     "NPU out of memory. Tried to allocate more than 1EB memory.\n", ptaErr(ErrCode::MEMORY));
    deviceAllocatorUsed.store(true, std::memory_order_relaxed);
    if (pluggable().alloc != nullptr) return allocatePluggable(nbytes, device);
    void* ptr = nullptr;
    if (nbytes > 0) {
      aclError status = npurt::cacheMalloc(&ptr, nbytes, device, nativeStream(getCurrentStream(device)));
      TORCH_CHECK_WITH(OutOfMemoryError, status != ACL_ERROR_RT_MEMORY_ALLOCATION, "NPU out of memory. ",
                       aclGetRecentErrMsg(),
                       "\nFree tensors you no longer need, call torch.npu.empty_cache(), or raise "
                       "NPU_SIM_DEVICE_MEMORY.\n",
                       ptaErr(ErrCode::MEMORY));
      NPU_CHECK_ACL(status);
      profiler::reportAllocation(ptr, nbytes, device);
    }
    return {ptr, ptr, &freeDeviceBlock, c10::Device(c10::DeviceType::PrivateUse1, device)};
  }

  c10::DeleterFnPtr raw_deleter() const override {
    return pluggable().alloc != nullptr ? &freePluggableBlock : &freeDeviceBlock;
  }

  void copy_data(void* dest, const void* src, size_t count) const override {
    NPU_CHECK_ACL(aclrtMemcpy(dest, count, src, count, ACL_MEMCPY_DEVICE_TO_DEVICE));
  }

  bool initialized() override { return deviceCount() > 0; }

  void emptyCache(c10::MempoolId_t /*mempool_id*/) override { NPU_CHECK_ACL(npurt::cacheEmpty(-1)); }

  void recordStream(const c10::DataPtr& ptr, c10::Stream stream) override {
    // The user's allocator decides for its blocks, the exporting process for memory it shared.
    if (ptr.get() == nullptr || ptr.get_deleter() == &freePluggableBlock || npurt::ipcIsImported(ptr.get())) return;
    NPU_CHECK_ACL(npurt::cacheRecordStream(ptr.get(), nativeStream(stream)));
  }

  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override;
  void resetAccumulatedStats(c10::DeviceIndex device) override;
  void resetPeakStats(c10::DeviceIndex device) override;

  std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override {
    size_t freeBytes = 0, totalBytes = 0;
    NPU_CHECK_ACL(aclrtGetMemInfo(resolveDevice(device), &freeBytes, &totalBytes));
    return {freeBytes, totalBytes};
  }
};

// A pinned block's pending use on a stream: the event recorded when the block was freed.
class HostEvent {
 public:
  explicit HostEvent(c10::Stream stream) {
    NPU_CHECK_ACL(aclrtCreateEventWithFlag(&event_, 0));
    NPU_CHECK_ACL(aclrtRecordEvent(event_, nativeStream(stream)));
  }
  HostEvent(HostEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  HostEvent& operator=(HostEvent&& other) noexcept {
    std::swap(event_, other.event_);
    return *this;
  }
  HostEvent(const HostEvent&) = delete;
  HostEvent& operator=(const HostEvent&) = delete;
  ~HostEvent() {
    if (event_ != nullptr) (void)aclrtDestroyEvent(event_);
  }
  bool completed() const {
    int32_t done = 1;
    (void)aclrtQueryEventStatus(event_, &done);
    return done != 0;
  }

 private:
  aclrtEvent event_ = nullptr;
};

int64_t microsecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
}

// torch's host caching (power-of-two buckets, stream-aware reuse, HostStats) over
// aclrtMallocHost. When the host cannot give more, the pinned cache and the device
// caches are released and the allocation retried once before it fails as OOM.
struct PinnedCacheImpl final : public at::CachingHostAllocatorImpl<c10::Stream, HostEvent> {
 private:
  void allocate_host_memory(size_t size, void** ptr) override {
    auto start = std::chrono::steady_clock::now();
    aclError status = aclrtMallocHost(ptr, size);
    if (status == ACL_ERROR_RT_MEMORY_ALLOCATION) {
      empty_cache();
      (void)npurt::cacheEmpty(-1);
      status = aclrtMallocHost(ptr, size);
    }
    TORCH_CHECK_WITH(OutOfMemoryError, status != ACL_ERROR_RT_MEMORY_ALLOCATION,
                     "NPU out of memory. Tried to allocate ", c10::CachingAllocator::format_size(size), " of pinned host memory: ",
                     aclGetRecentErrMsg(), "\nFree pinned tensors you no longer need or call torch.npu.host_empty_cache().\n",
                     ptaErr(ErrCode::MEMORY));
    NPU_CHECK_ACL(status);
    std::lock_guard<std::mutex> lock(stats_.timing_mutex_);
    stats_.host_alloc_time.increase(microsecondsSince(start));
  }

  void free_block(at::HostBlock<c10::Stream>* block) override {
    auto start = std::chrono::steady_clock::now();
    (void)aclrtFreeHost(block->ptr_);  // cannot fail: the block came from aclrtMallocHost
    std::lock_guard<std::mutex> lock(stats_.timing_mutex_);
    stats_.host_free_time.increase(microsecondsSince(start));
  }

  void record_stream(std::optional<std::vector<HostEvent>>& events, c10::Stream stream) override {
    events->emplace_back(stream);
  }

  bool query_event(HostEvent& event) override { return event.completed(); }

  c10::Stream get_current_stream() const override { return getCurrentStream(currentDevice()); }

  bool stream_is_capturing(c10::Stream /*stream*/) const override { return false; }

  bool pinned_use_background_threads() override { return false; }

 public:
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    NPU_CHECK_ACL(aclrtMemcpy(dest, count, src, count, ACL_MEMCPY_HOST_TO_HOST));
  }
};

void freePinnedBlock(void* ctx);

struct PinnedAllocator final : public at::CachingHostAllocatorInterface<PinnedCacheImpl, freePinnedBlock> {};

void copyStatArray(const npurt::StatArray& from, c10::CachingDeviceAllocator::StatArray& to) {
  for (int i = 0; i < npurt::kNumStatTypes; ++i) copyStat(from[i], to[i]);
}

}  // namespace

c10::CachingDeviceAllocator::DeviceStats NpuAllocator::getDeviceStats(c10::DeviceIndex device) {
  npurt::DeviceStats raw;
  NPU_CHECK_ACL(npurt::cacheGetStats(resolveDevice(device), &raw));
  c10::CachingDeviceAllocator::DeviceStats stats;
  copyStatArray(raw.allocation, stats.allocation);
  copyStatArray(raw.segment, stats.segment);
  copyStatArray(raw.active, stats.active);
  copyStatArray(raw.inactive_split, stats.inactive_split);
  copyStatArray(raw.allocated_bytes, stats.allocated_bytes);
  copyStatArray(raw.reserved_bytes, stats.reserved_bytes);
  copyStatArray(raw.active_bytes, stats.active_bytes);
  copyStatArray(raw.inactive_split_bytes, stats.inactive_split_bytes);
  copyStatArray(raw.requested_bytes, stats.requested_bytes);
  stats.num_alloc_retries = raw.num_alloc_retries;
  stats.num_ooms = raw.num_ooms;
  copyStat(raw.oversize_allocations, stats.oversize_allocations);
  copyStat(raw.oversize_segments, stats.oversize_segments);
  stats.num_sync_all_streams = raw.num_sync_all_streams;
  stats.num_device_alloc = raw.num_device_alloc;
  stats.num_device_free = raw.num_device_free;
  stats.max_split_size = raw.max_split_size;
  return stats;
}

void NpuAllocator::resetAccumulatedStats(c10::DeviceIndex device) {
  NPU_CHECK_ACL(npurt::cacheResetAccumulatedStats(resolveDevice(device)));
}

void NpuAllocator::resetPeakStats(c10::DeviceIndex device) {
  NPU_CHECK_ACL(npurt::cacheResetPeakStats(resolveDevice(device)));
}

namespace {

NpuAllocator deviceAllocatorInstance;

// Leaked on purpose: stream workers may drop pinned storages while static destructors run at exit.
PinnedAllocator& pinnedAllocatorInstance() {
  static PinnedAllocator* instance = new PinnedAllocator();
  return *instance;
}

void freePinnedBlock(void* ctx) { pinnedAllocatorInstance().free(ctx); }

// A device allocation the host could not back first releases the pinned cache.
void releasePinnedCache() { pinnedAllocatorInstance().empty_cache(); }

const bool reclaimRegistered = [] {
  (void)npurt::cacheSetHostReclaimHook(&releasePinnedCache);
  // torch.accelerator.empty_host_cache() / host memory stats (and torch.accelerator.Graph's
  // __enter__) look the pinned cache up by device type; unregistered, they dereference null.
  at::setHostAllocator(c10::DeviceType::PrivateUse1, &pinnedAllocatorInstance());
  return true;
}();

}  // namespace

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &deviceAllocatorInstance);

c10::DeviceAllocator* npuAllocator() { return &deviceAllocatorInstance; }
at::HostAllocator* pinnedAllocator() { return &pinnedAllocatorInstance(); }

void usePluggableAllocator(PluggableAlloc alloc, PluggableFree free) {
  TORCH_CHECK(alloc != nullptr && free != nullptr, "the pluggable allocator needs both an alloc and a free function\n",
              ptaErr(ErrCode::PARAM));
  TORCH_CHECK(!deviceAllocatorUsed.load(), "Can't swap an already initialized allocator: "
              "call torch.npu.memory.change_current_allocator before the first NPU allocation\n",
              ptaErr(ErrCode::NOT_SUPPORT));
  Pluggable& p = pluggable();
  p.free = free;
  p.alloc = alloc;
}

const char* allocatorBackend() { return pluggable().alloc != nullptr ? "pluggable" : "native"; }

bool isPinnedPtr(const void* ptr) {
  aclrtMemLocation location = ACL_MEM_LOCATION_UNREGISTERED;
  int32_t device = -1;
  return ptr != nullptr && aclrtPointerGetAttributes(ptr, &location, &device) == ACL_SUCCESS &&
         location == ACL_MEM_LOCATION_HOST_PINNED;
}

void resizeStorageBytes(const c10::Storage& storage, size_t nbytes) {
  c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
  TORCH_CHECK(impl->resizable(), "Trying to resize storage that is not resizable\n", ptaErr(ErrCode::NOT_SUPPORT));
  c10::DeviceGuard guard(impl->device());
  c10::DataPtr fresh = deviceAllocatorInstance.allocate(nbytes);
  size_t keep = std::min(nbytes, impl->nbytes());
  if (keep > 0) {
    c10::Stream stream = getCurrentStream(impl->device().index());
    NPU_CHECK_ACL(aclrtMemcpyAsync(fresh.get(), nbytes, impl->data(), keep, ACL_MEMCPY_DEVICE_TO_DEVICE,
                                   nativeStream(stream)));
    // The old block is freed below while the copy may still be queued.
    deviceAllocatorInstance.recordStream(impl->data_ptr(), stream);
  }
  impl->set_data_ptr_noswap(std::move(fresh));
  impl->set_nbytes(nbytes);
}

}  // namespace torch_npu
