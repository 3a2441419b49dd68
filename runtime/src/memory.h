// The registry of raw device allocations and pinned host buffers, searchable by address.
#pragma once

#include <cstddef>
#include <cstdint>

#include "npurt/acl_rt.h"

namespace npurt {

struct MemoryRange {
  uintptr_t base = 0;
  size_t size = 0;
  aclrtMemLocation location = ACL_MEM_LOCATION_UNREGISTERED;
  int32_t device = -1;
  int fd = -1;          // the memfd behind a device allocation (-1: none)
  uint64_t serial = 0;  // its process-unique segment number
  bool imported = false;  // mapped from another process's allocation (aclrtIpcMemImportByKey)
};

// The registered range containing `ptr` (location UNREGISTERED when none does).
MemoryRange findMemoryRange(const void* ptr);
// Bytes of raw device memory currently allocated on `device`.
size_t deviceMemoryUsed(int32_t device);
// Bytes of host memory backing device and pinned allocations (against hostMemoryLimit()).
size_t hostMemoryUsed();
// Another process's device memory mapped at [base, base + size): device memory of
// `device` for copies and pointer queries, not counted against this process's capacity.
void registerImportedRange(void* base, size_t size, int32_t device, uint64_t serial);
void unregisterImportedRange(void* base);

}  // namespace npurt
