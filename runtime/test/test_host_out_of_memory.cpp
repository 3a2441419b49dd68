// When the host cannot back a device allocation, the result is an OOM status, never a crash.
#include "expect.h"
#include "npurt/caching_allocator.h"

namespace {

void hostMallocFailureIsDeviceOom() {
  void* ptr = nullptr;
  // 200 TiB exceeds the 128 TiB user address space of x86-64 Linux: the host must refuse it.
  EXPECT(aclrtMalloc(&ptr, size_t(200) << 40, 0) == ACL_ERROR_RT_MEMORY_ALLOCATION);
  EXPECT(contains(aclGetRecentErrMsg(), "host could not provide"));
  size_t freeBytes = 0, total = 0;
  EXPECT_OK(aclrtGetMemInfo(0, &freeBytes, &total));
  EXPECT(freeBytes == total);  // the failed reservation was returned
}

void cachingAllocatorReportsTheHostFailure() {
  void* ptr = nullptr;
  EXPECT(npurt::cacheMalloc(&ptr, size_t(200) << 40, 0, nullptr) == ACL_ERROR_RT_MEMORY_ALLOCATION);
  EXPECT(contains(aclGetRecentErrMsg(), "out of memory on device 0"));
  EXPECT(contains(aclGetRecentErrMsg(), "host could not provide"));
}

}  // namespace

int main() {
  setenv("NPU_SIM_DEVICE_MEMORY", "256T", 1);
  RUN(hostMallocFailureIsDeviceOom);
  RUN(cachingAllocatorReportsTheHostFailure);
  return 0;
}
