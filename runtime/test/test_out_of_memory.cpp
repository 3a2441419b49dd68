// Out of memory on a 64 MiB device: retry after freeing the cache, then a clear error, then recovery.
#include "allocator_checks.h"

namespace {

void retryFreesTheCache() {
  void* a = nullptr;
  EXPECT_OK(npurt::cacheMalloc(&a, 40 * kMiB, 0, nullptr));
  EXPECT_OK(npurt::cacheFree(a));  // 40 MiB stays cached
  void* b = nullptr;
  EXPECT_OK(npurt::cacheMalloc(&b, 50 * kMiB, 0, nullptr));
  npurt::DeviceStats stats = statsOf(0);
  EXPECT(stats.num_alloc_retries == 1 && stats.num_ooms == 0);
  EXPECT(current(stats.reserved_bytes) == int64_t(50 * kMiB));
  EXPECT_OK(npurt::cacheFree(b));
  EXPECT_OK(npurt::cacheEmpty(0));
}

void oomReportsThenDeviceRecovers() {
  void* held = nullptr;
  EXPECT_OK(npurt::cacheMalloc(&held, 40 * kMiB, 0, nullptr));
  void* extra = nullptr;
  EXPECT(npurt::cacheMalloc(&extra, 30 * kMiB, 0, nullptr) == ACL_ERROR_RT_MEMORY_ALLOCATION);
  const char* message = aclGetRecentErrMsg();
  EXPECT(contains(message, "out of memory on device 0"));
  EXPECT(contains(message, "Tried to allocate 30.00 MiB"));
  EXPECT(contains(message, "total capacity of 64.00 MiB"));
  EXPECT(contains(message, "40.00 MiB allocated"));
  EXPECT(contains(message, "40.00 MiB reserved"));
  EXPECT(contains(message, "PYTORCH_NPU_ALLOC_CONF"));
  EXPECT(contains(message, "empty_cache"));
  EXPECT(extra == nullptr);
  EXPECT(statsOf(0).num_ooms == 1);
  EXPECT_OK(npurt::cacheFree(held));
  EXPECT_OK(npurt::cacheMalloc(&extra, 30 * kMiB, 0, nullptr));
  EXPECT_OK(npurt::cacheFree(extra));
  EXPECT_OK(npurt::cacheEmpty(0));
}

void hugeRequestIsOomNotOverflow() {
  void* ptr = nullptr;
  EXPECT(npurt::cacheMalloc(&ptr, SIZE_MAX, 0, nullptr) == ACL_ERROR_RT_MEMORY_ALLOCATION);
  EXPECT(ptr == nullptr);
  EXPECT(aclrtMalloc(&ptr, SIZE_MAX - 10, 0) == ACL_ERROR_RT_MEMORY_ALLOCATION);
}

void rawMallocBeyondCapacity() {
  void* ptr = nullptr;
  EXPECT(aclrtMalloc(&ptr, 65 * kMiB, 1) == ACL_ERROR_RT_MEMORY_ALLOCATION);
  EXPECT(ptr == nullptr);
  void* half = nullptr;
  EXPECT_OK(aclrtMalloc(&half, 40 * kMiB, 1));
  EXPECT(aclrtMalloc(&ptr, 40 * kMiB, 1) == ACL_ERROR_RT_MEMORY_ALLOCATION);
  EXPECT_OK(aclrtFree(half));
  EXPECT_OK(aclrtMalloc(&ptr, 40 * kMiB, 1));
  EXPECT_OK(aclrtFree(ptr));
}

void memoryFractionCapsReservation() {
  EXPECT_OK(npurt::cacheSetMemoryFraction(0.25, 2));  // 16 MiB
  double fraction = 0;
  EXPECT_OK(npurt::cacheGetMemoryFraction(2, &fraction));
  EXPECT(fraction == 0.25);
  void* ptr = nullptr;
  EXPECT(npurt::cacheMalloc(&ptr, 20 * kMiB, 2, nullptr) == ACL_ERROR_RT_MEMORY_ALLOCATION);
  EXPECT(contains(aclGetRecentErrMsg(), "memory fraction"));
  EXPECT_OK(npurt::cacheMalloc(&ptr, 12 * kMiB, 2, nullptr));
  EXPECT_OK(npurt::cacheFree(ptr));
  EXPECT_OK(npurt::cacheSetMemoryFraction(1.0, 2));
  EXPECT_OK(npurt::cacheMalloc(&ptr, 20 * kMiB, 2, nullptr));
  EXPECT_OK(npurt::cacheFree(ptr));
}

}  // namespace

int main() {
  setenv("NPU_SIM_DEVICE_MEMORY", "64M", 1);
  RUN(retryFreesTheCache);
  RUN(oomReportsThenDeviceRecovers);
  RUN(hugeRequestIsOomNotOverflow);
  RUN(rawMallocBeyondCapacity);
  RUN(memoryFractionCapsReservation);
  return 0;
}
