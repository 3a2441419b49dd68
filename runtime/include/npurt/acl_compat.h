// The ACL entry points AscendC host programs call that the simulated runtime does not need on
// its own: process init/finalize, stream creation, device reset, synchronous memset. Thin
// wrappers over acl_rt.h, so a host program written for CANN runs unchanged (npu-ascendc).
#pragma once

#include "npurt/acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

// Nothing to configure: the devices come from the environment (acl_rt.h). Idempotent.
aclError aclInit(const char* configPath);
aclError aclFinalize(void);
// A stream of the current device: the pool streams (1..ACL_STREAM_POOL_SIZE) are handed out in
// turn; they live for the process, so destroying one only drains it.
aclError aclrtCreateStream(aclrtStream* stream);
aclError aclrtDestroyStream(aclrtStream stream);
// Drains the device's work; its memory stays with the process (as the caching allocator's does).
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count);

#ifdef __cplusplus
}  // extern "C"
#endif
