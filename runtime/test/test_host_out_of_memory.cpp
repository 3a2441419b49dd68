// When the host cannot back a device allocation, the result is an OOM status, never a crash.
#include "expect.h"

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

}  // namespace

int main() {
  setenv("NPU_SIM_DEVICE_MEMORY", "256T", 1);
  RUN(hostMallocFailureIsDeviceOom);
  return 0;
}
