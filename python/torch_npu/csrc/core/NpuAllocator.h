// torch's view of NPU memory: a c10::DeviceAllocator over the runtime's caching
// allocator (npurt/caching_allocator.h), and the pinned host allocator behind
// tensor.pin_memory(): torch's CachingHostAllocator on aclrtMallocHost, so a freed
// pinned block is reused for the next request of its (power-of-two) size.
#pragma once

#include <ATen/core/CachingHostAllocator.h>
#include <c10/core/Allocator.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/Storage.h>

#include "npurt/acl_rt.h"

namespace torch_npu {

// The allocator registered for PrivateUse1: allocates on the current device for
// its current stream; running out raises torch.OutOfMemoryError (ERR00006).
c10::DeviceAllocator* npuAllocator();
// Page-locked host memory (aclrtMallocHost), cached; its DataPtrs are CPU pointers.
at::HostAllocator* pinnedAllocator();
bool isPinnedPtr(const void* ptr);

// torch.npu.change_current_allocator: device memory from a user's alloc/free pair
// (torch.cuda's pluggable signatures with aclrtStream) instead of the caching
// allocator. Only before the first NPU allocation of the process.
using PluggableAlloc = void* (*)(size_t size, int device, aclrtStream stream);
using PluggableFree = void (*)(void* ptr, size_t size, int device, aclrtStream stream);
void usePluggableAllocator(PluggableAlloc alloc, PluggableFree free);
// "native" (the caching allocator) or "pluggable".
const char* allocatorBackend();

// Grows or shrinks an NPU storage to `nbytes` on its device, keeping the old bytes;
// the copy is a task on the current stream, so it is ordered after pending writes.
void resizeStorageBytes(const c10::Storage& storage, size_t nbytes);

}  // namespace torch_npu
