#include "torch_npu/csrc/profiler/NpuMemoryReport.h"

#include <c10/core/Allocator.h>

#include <atomic>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "npurt/caching_allocator.h"

namespace torch_npu::profiler {
namespace {

// The free path has only the pointer: sizes of blocks reported while profiling, kept
// until they come back. `tracked` lets every other free skip the lock.
struct Tracked {
  std::mutex mutex;
  std::unordered_map<void*, std::pair<size_t, c10::DeviceIndex>> blocks;
  std::atomic<size_t> count{0};
};

Tracked& tracked() {
  static Tracked* blocks = new Tracked();  // leaked: frees may come during static destruction
  return *blocks;
}

void report(void* ptr, int64_t delta, c10::DeviceIndex device) {
  npurt::DeviceStats stats;
  if (npurt::cacheGetStats(device, &stats) != ACL_SUCCESS) return;
  c10::reportMemoryUsageToProfiler(ptr, delta, static_cast<size_t>(stats.allocated_bytes[npurt::kStatAggregate].current),
                                   static_cast<size_t>(stats.reserved_bytes[npurt::kStatAggregate].current),
                                   c10::Device(c10::DeviceType::PrivateUse1, device));
}

}  // namespace

void reportAllocation(void* ptr, size_t nbytes, c10::DeviceIndex device) {
  if (ptr == nullptr || !c10::memoryProfilingEnabled()) return;
  Tracked& t = tracked();
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    t.blocks[ptr] = {nbytes, device};
    t.count.store(t.blocks.size());
  }
  report(ptr, static_cast<int64_t>(nbytes), device);
}

void reportFree(void* ptr) {
  Tracked& t = tracked();
  if (ptr == nullptr || t.count.load(std::memory_order_relaxed) == 0) return;
  std::pair<size_t, c10::DeviceIndex> block;
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    auto it = t.blocks.find(ptr);
    if (it == t.blocks.end()) return;
    block = it->second;
    t.blocks.erase(it);
    t.count.store(t.blocks.size());
  }
  if (c10::memoryProfilingEnabled()) report(ptr, -static_cast<int64_t>(block.first), block.second);
}

}  // namespace torch_npu::profiler
