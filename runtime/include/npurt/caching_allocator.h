// The caching allocator: one per device, on top of aclrtMalloc/aclrtFree.
//
// Small (<= 1 MiB, from 2 MiB segments) and large pools, block splitting and
// merging, stream-aware reuse: a block freed while other streams used it
// (cacheRecordStream) returns to the pool only after events recorded on those
// streams complete. Configured by PYTORCH_NPU_ALLOC_CONF (read once).
#pragma once

#include <cstddef>
#include <cstdint>

#include "npurt/acl_rt.h"

namespace npurt {

// Allocates `size` bytes on `device` for use on `stream`. On failure frees the
// cache, retries once, then returns ACL_ERROR_RT_MEMORY_ALLOCATION with a message
// (aclGetRecentErrMsg) stating requested / allocated / reserved / capacity.
aclError cacheMalloc(void** ptr, size_t size, int32_t device, aclrtStream stream);
// Returns a block obtained from cacheMalloc to the cache (nullptr is a no-op).
aclError cacheFree(void* ptr);
// Marks `ptr` as used by `stream`, so its reuse waits for that stream's work.
aclError cacheRecordStream(void* ptr, aclrtStream stream);
// Releases every unused cached segment of `device` (-1: all devices).
aclError cacheEmpty(int32_t device);

}  // namespace npurt
