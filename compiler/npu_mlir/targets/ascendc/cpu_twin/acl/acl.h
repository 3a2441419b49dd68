// CANN's host header, for AscendC host programs built by npu-ascendc: the simulated runtime's
// ACL-shaped API (aclInit, aclrtSetDevice, aclrtCreateStream, aclrtMalloc, aclrtMemcpy, ...).
#pragma once

#include "npurt/acl_compat.h"
#include "npurt/acl_rt.h"

// CANN's aclrtMalloc takes an allocation policy where the runtime takes a device: this overload
// serves host code written for CANN (the policy has no meaning for host-memory devices).
typedef enum aclrtMemMallocPolicy {
  ACL_MEM_MALLOC_HUGE_FIRST = 0,
  ACL_MEM_MALLOC_HUGE_ONLY = 1,
  ACL_MEM_MALLOC_NORMAL_ONLY = 2,
  ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3,
  ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4,
  ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5,
} aclrtMemMallocPolicy;

#ifdef __cplusplus
inline aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy) {
  (void)policy;
  int32_t device = 0;
  if (aclError rc = aclrtGetDevice(&device)) return rc;
  return aclrtMalloc(devPtr, size, device);
}
#endif
