// NPU_SIM_HOST_MEMORY bounds device and pinned memory together; the caching
// allocator frees other devices' caches and calls the reclaim hook before failing.
#include "expect.h"
#include "npurt/caching_allocator.h"

namespace {

constexpr size_t kMiB = size_t(1) << 20;
int reclaimCalls = 0;

void countReclaim() { ++reclaimCalls; }

void limitCoversDevicesAndPinnedMemory() {
  size_t used = 0, limit = 0;
  EXPECT_OK(aclrtGetHostMemInfo(&used, &limit));
  EXPECT(limit == 64 * kMiB && used == 0);
  void* a = nullptr;
  void* b = nullptr;
  void* pinned = nullptr;
  EXPECT_OK(aclrtMalloc(&a, 40 * kMiB, 0));
  EXPECT(aclrtMalloc(&b, 32 * kMiB, 1) == ACL_ERROR_RT_MEMORY_ALLOCATION);
  EXPECT(contains(aclGetRecentErrMsg(), "host could not provide"));
  EXPECT(contains(aclGetRecentErrMsg(), "NPU_SIM_HOST_MEMORY"));
  EXPECT(aclrtMallocHost(&pinned, 32 * kMiB) == ACL_ERROR_RT_MEMORY_ALLOCATION);
  EXPECT_OK(aclrtMallocHost(&pinned, 16 * kMiB));
  EXPECT_OK(aclrtGetHostMemInfo(&used, &limit));
  EXPECT(used == 56 * kMiB);
  EXPECT_OK(aclrtFree(a));
  EXPECT_OK(aclrtFreeHost(pinned));
  EXPECT_OK(aclrtMalloc(&b, 32 * kMiB, 1));
  EXPECT_OK(aclrtFree(b));
  EXPECT_OK(aclrtGetHostMemInfo(&used, &limit));
  EXPECT(used == 0);
}

void otherDevicesCachesAreFreedBeforeFailing() {
  EXPECT_OK(npurt::cacheSetHostReclaimHook(&countReclaim));
  void* a = nullptr;
  EXPECT_OK(npurt::cacheMalloc(&a, 40 * kMiB, 0, nullptr));
  EXPECT_OK(npurt::cacheFree(a));  // cached on device 0, still holding host memory
  void* b = nullptr;
  EXPECT_OK(npurt::cacheMalloc(&b, 40 * kMiB, 1, nullptr));
  EXPECT(reclaimCalls == 1);
  npurt::DeviceStats stats;
  EXPECT_OK(npurt::cacheGetStats(0, &stats));
  EXPECT(stats.reserved_bytes[npurt::kStatAggregate].current == 0);
  // Beyond what every cache can give back: a clean OOM naming the host limit.
  void* c = nullptr;
  EXPECT(npurt::cacheMalloc(&c, 40 * kMiB, 0, nullptr) == ACL_ERROR_RT_MEMORY_ALLOCATION);
  EXPECT(contains(aclGetRecentErrMsg(), "out of memory on device 0"));
  EXPECT(contains(aclGetRecentErrMsg(), "NPU_SIM_HOST_MEMORY"));
  EXPECT_OK(npurt::cacheFree(b));
  EXPECT_OK(npurt::cacheMalloc(&c, 40 * kMiB, 0, nullptr));
  EXPECT_OK(npurt::cacheFree(c));
  EXPECT_OK(npurt::cacheSetHostReclaimHook(nullptr));
}


}  // namespace

int main() {
  setenv("NPU_SIM_HOST_MEMORY", "64M", 1);
  setenv("NPU_SIM_DEVICE_MEMORY", "1G", 1);
  RUN(limitCoversDevicesAndPinnedMemory);
  RUN(otherDevicesCachesAreFreedBeforeFailing);
  return 0;
}
