// A device cache's counters and its per-process memory fraction.
#include "device_cache.h"

namespace npurt {

DeviceStats DeviceCache::stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void DeviceCache::resetPeakStats() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (StatArray* array : {&stats_.allocation, &stats_.segment, &stats_.active, &stats_.inactive_split,
                           &stats_.allocated_bytes, &stats_.reserved_bytes, &stats_.active_bytes,
                           &stats_.inactive_split_bytes, &stats_.requested_bytes}) {
    for (Stat& stat : *array) stat.peak = stat.current;
  }
  stats_.oversize_allocations.peak = stats_.oversize_allocations.current;
  stats_.oversize_segments.peak = stats_.oversize_segments.current;
}

void DeviceCache::resetAccumulatedStats() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (StatArray* array : {&stats_.allocation, &stats_.segment, &stats_.active, &stats_.inactive_split,
                           &stats_.allocated_bytes, &stats_.reserved_bytes, &stats_.active_bytes,
                           &stats_.inactive_split_bytes, &stats_.requested_bytes}) {
    for (Stat& stat : *array) stat.allocated = stat.freed = 0;
  }
  for (Stat* stat : {&stats_.oversize_allocations, &stats_.oversize_segments}) stat->allocated = stat->freed = 0;
  stats_.num_alloc_retries = stats_.num_ooms = stats_.num_sync_all_streams = 0;
  stats_.num_device_alloc = stats_.num_device_free = 0;
}

void DeviceCache::setMemoryFraction(double fraction) {
  std::lock_guard<std::mutex> lock(mutex_);
  fraction_ = fraction;
}

double DeviceCache::memoryFraction() {
  std::lock_guard<std::mutex> lock(mutex_);
  return fraction_;
}

}  // namespace npurt
