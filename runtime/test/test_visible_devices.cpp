// ASCEND_RT_VISIBLE_DEVICES masks and reorders the simulated devices (read once).
#include "expect.h"

namespace {

void maskedCountAndCapacity() {
  uint32_t count = 0;
  EXPECT_OK(aclrtGetDeviceCount(&count));
  EXPECT(count == 2);
  aclrtDeviceProp prop;
  EXPECT_OK(aclrtGetDeviceProperties(1, &prop));
  EXPECT(prop.totalGlobalMem == (size_t(3) << 30));
}

void hiddenIdsAreOutOfRange() {
  EXPECT(aclrtSetDevice(2) == ACL_ERROR_RT_INVALID_DEVICEID);
  EXPECT(contains(aclGetRecentErrMsg(), "2 device(s) visible"));
  void* ptr = nullptr;
  EXPECT(aclrtMalloc(&ptr, 16, 3) == ACL_ERROR_RT_INVALID_DEVICEID);
}

}  // namespace

int main() {
  setenv("NPU_SIM_DEVICE_COUNT", "4", 1);
  setenv("NPU_SIM_DEVICE_MEMORY", "3G", 1);
  setenv("ASCEND_RT_VISIBLE_DEVICES", "3,1", 1);
  RUN(maskedCountAndCapacity);
  RUN(hiddenIdsAreOutOfRange);
  return 0;
}
