#include "torch_npu/csrc/core/NpuAllocator.h"

#include <c10/core/DeviceGuard.h>
#include <c10/core/StorageImpl.h>

#include <algorithm>

#include "npurt/acl_rt.h"
#include "npurt/caching_allocator.h"
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

void freePinnedBlock(void* ptr) { (void)aclrtFreeHost(ptr); }

void copyStat(const npurt::Stat& from, c10::CachingDeviceAllocator::Stat& to) {
  to.current = from.current;
  to.peak = from.peak;
  to.allocated = from.allocated;
  to.freed = from.freed;
}

class NpuAllocator final : public c10::DeviceAllocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override {
    c10::DeviceIndex device = currentDevice();
    checkNotForkedChild();
    markInitialized(device);
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

  c10::DeleterFnPtr raw_deleter() const override { return &freeDeviceBlock; }

  void copy_data(void* dest, const void* src, size_t count) const override {
    NPU_CHECK_ACL(aclrtMemcpy(dest, count, src, count, ACL_MEMCPY_DEVICE_TO_DEVICE));
  }

  bool initialized() override { return deviceCount() > 0; }

  void emptyCache(c10::MempoolId_t /*mempool_id*/) override { NPU_CHECK_ACL(npurt::cacheEmpty(-1)); }

  void recordStream(const c10::DataPtr& ptr, c10::Stream stream) override {
    if (ptr.get() == nullptr) return;
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

class PinnedAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t nbytes) override {
    void* ptr = nullptr;
    if (nbytes > 0) {
      aclError status = aclrtMallocHost(&ptr, nbytes);
      TORCH_CHECK_WITH(OutOfMemoryError, status != ACL_ERROR_RT_MEMORY_ALLOCATION,
                       "out of pinned host memory: ", aclGetRecentErrMsg(), "\n", ptaErr(ErrCode::MEMORY));
      NPU_CHECK_ACL(status);
    }
    return {ptr, ptr, &freePinnedBlock, c10::Device(c10::DeviceType::CPU)};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &freePinnedBlock; }

  void copy_data(void* dest, const void* src, size_t count) const override {
    NPU_CHECK_ACL(aclrtMemcpy(dest, count, src, count, ACL_MEMCPY_HOST_TO_HOST));
  }
};

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
PinnedAllocator pinnedAllocatorInstance;

}  // namespace

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &deviceAllocatorInstance);

c10::DeviceAllocator* npuAllocator() { return &deviceAllocatorInstance; }
c10::Allocator* pinnedAllocator() { return &pinnedAllocatorInstance; }

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
