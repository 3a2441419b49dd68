// Reading the caching allocator's counters in the allocator tests.
#pragma once

#include "expect.h"
#include "npurt/caching_allocator.h"

constexpr size_t kMiB = size_t(1) << 20;

inline npurt::DeviceStats statsOf(int32_t device) {
  npurt::DeviceStats stats;
  EXPECT_OK(npurt::cacheGetStats(device, &stats));
  return stats;
}

inline int64_t current(const npurt::StatArray& stat) { return stat[npurt::kStatAggregate].current; }
