// Thin ACL entry points for AscendC host programs (acl_compat.h).
#include "npurt/acl_compat.h"

#include <atomic>
#include <cstring>

extern "C" {

aclError aclInit(const char* configPath) {
  (void)configPath;
  return ACL_SUCCESS;
}

aclError aclFinalize(void) { return ACL_SUCCESS; }

aclError aclrtCreateStream(aclrtStream* stream) {
  static std::atomic<uint32_t> next{0};
  if (stream == nullptr) return ACL_ERROR_INVALID_PARAM;
  int32_t device = 0;
  if (aclError rc = aclrtGetDevice(&device)) return rc;
  return aclrtGetStreamByIndex(device, 1 + next++ % ACL_STREAM_POOL_SIZE, stream);
}

aclError aclrtDestroyStream(aclrtStream stream) { return aclrtSynchronizeStream(stream); }

aclError aclrtResetDevice(int32_t deviceId) {
  int32_t current = 0;
  if (aclError rc = aclrtGetDevice(&current)) return rc;
  if (aclError rc = aclrtSetDevice(deviceId)) return rc;
  aclError rc = aclrtSynchronizeDevice();
  aclrtSetDevice(current);
  return rc;
}

aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count) {
  if (devPtr == nullptr || count > maxCount) return ACL_ERROR_INVALID_PARAM;
  std::memset(devPtr, value, count);
  return ACL_SUCCESS;
}

}  // extern "C"
