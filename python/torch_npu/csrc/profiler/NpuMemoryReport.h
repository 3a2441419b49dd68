// What the caching allocator tells torch's memory profiler (profile_memory=True,
// export_memory_timeline): each block handed out and taken back, with the device's
// allocated and reserved totals after the change.
#pragma once

#include <c10/core/Device.h>

#include <cstddef>

namespace torch_npu::profiler {

// Cheap when memory profiling is off: one thread-local lookup.
void reportAllocation(void* ptr, size_t nbytes, c10::DeviceIndex device);
// After the block went back to the cache. A no-op for blocks handed out while off.
void reportFree(void* ptr);

}  // namespace torch_npu::profiler
