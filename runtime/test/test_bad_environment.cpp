// A malformed device environment fails every device call with a message naming the variable.
#include "expect.h"

namespace {

void everyCallExplainsTheVariable() {
  uint32_t count = 0;
  EXPECT(aclrtGetDeviceCount(&count) == ACL_ERROR_INVALID_PARAM);
  EXPECT(contains(aclGetRecentErrMsg(), "ASCEND_RT_VISIBLE_DEVICES='0,9'"));
  EXPECT(aclrtSetDevice(0) == ACL_ERROR_INVALID_PARAM);
  void* ptr = nullptr;
  EXPECT(aclrtMalloc(&ptr, 16, 0) == ACL_ERROR_INVALID_PARAM);
}

}  // namespace

int main() {
  setenv("NPU_SIM_DEVICE_COUNT", "4", 1);
  setenv("ASCEND_RT_VISIBLE_DEVICES", "0,9", 1);
  RUN(everyCallExplainsTheVariable);
  return 0;
}
