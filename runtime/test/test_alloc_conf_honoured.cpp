// The PYTORCH_NPU_ALLOC_CONF options change what the allocator does.
#include "allocator_checks.h"

namespace {

aclrtStream stream(uint32_t index) {
  aclrtStream s = nullptr;
  EXPECT_OK(aclrtGetStreamByIndex(0, index, &s));
  return s;
}

void expandableSegmentsSizeToTheRequest() {
  npurt::AllocatorConfig config;
  EXPECT_OK(npurt::cacheGetConfig(&config));
  EXPECT(config.expandable_segments && config.max_split_size == 32 * kMiB);
  void* ptr = nullptr;
  EXPECT_OK(npurt::cacheMalloc(&ptr, 3 * kMiB, 1, nullptr));
  EXPECT(current(statsOf(1).reserved_bytes) == int64_t(4 * kMiB));  // not a 20 MiB segment
  EXPECT_OK(npurt::cacheFree(ptr));
  EXPECT_OK(npurt::cacheEmpty(1));
}

void oversizeBlocksServeOnlyOversizeRequests() {
  EXPECT(statsOf(2).max_split_size == int64_t(32 * kMiB));
  void* big = nullptr;
  EXPECT_OK(npurt::cacheMalloc(&big, 40 * kMiB, 2, nullptr));
  EXPECT(statsOf(2).oversize_allocations.current == 1 && statsOf(2).oversize_segments.current == 1);
  EXPECT_OK(npurt::cacheFree(big));
  void* medium = nullptr;
  EXPECT_OK(npurt::cacheMalloc(&medium, 8 * kMiB, 2, nullptr));
  EXPECT(medium != big);  // the cached 40 MiB block is not split for it
  EXPECT(current(statsOf(2).segment) == 2);
  EXPECT_OK(npurt::cacheFree(medium));
  EXPECT_OK(npurt::cacheEmpty(2));
}

void garbageCollectionReleasesCacheEarly() {
  // 100 MiB device, threshold 0.5: a new segment that would push reservation past
  // 50 MiB first releases unused cached segments, without an OOM retry.
  void* first = nullptr;
  EXPECT_OK(npurt::cacheMalloc(&first, 30 * kMiB, 0, stream(1)));
  EXPECT_OK(npurt::cacheFree(first));
  void* second = nullptr;
  EXPECT_OK(npurt::cacheMalloc(&second, 24 * kMiB, 0, stream(2)));
  npurt::DeviceStats stats = statsOf(0);
  EXPECT(current(stats.reserved_bytes) == int64_t(24 * kMiB));
  EXPECT(stats.num_alloc_retries == 0);
  EXPECT_OK(npurt::cacheFree(second));
}

}  // namespace

int main() {
  setenv("NPU_SIM_DEVICE_MEMORY", "100M", 1);
  setenv("PYTORCH_NPU_ALLOC_CONF", "expandable_segments:True,max_split_size_mb:32,garbage_collection_threshold:0.5", 1);
  RUN(expandableSegmentsSizeToTheRequest);
  RUN(oversizeBlocksServeOnlyOversizeRequests);
  RUN(garbageCollectionReleasesCacheEarly);
  return 0;
}
