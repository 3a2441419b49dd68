// The caching allocator on one stream: pools, rounding, split/merge, stats.
#include <vector>

#include "allocator_checks.h"

namespace {

void* alloc(size_t size, int32_t device = 0) {
  void* ptr = nullptr;
  EXPECT_OK(npurt::cacheMalloc(&ptr, size, device, nullptr));
  return ptr;
}

void statsReturnToZeroAfterFrees() {
  std::vector<void*> blocks;
  for (size_t size : {size_t(1), size_t(700), size_t(512 * 1024), 3 * kMiB, 12 * kMiB, 30 * kMiB}) {
    blocks.push_back(alloc(size, 1));
  }
  npurt::DeviceStats busy = statsOf(1);
  EXPECT(current(busy.allocation) == 6);
  EXPECT(current(busy.requested_bytes) == int64_t(1 + 700 + 512 * 1024 + 45 * kMiB));
  EXPECT(busy.allocation[npurt::kStatSmallPool].current == 3);
  EXPECT(busy.allocation[npurt::kStatLargePool].current == 3);
  for (void* ptr : blocks) EXPECT_OK(npurt::cacheFree(ptr));
  npurt::DeviceStats idle = statsOf(1);
  for (const npurt::StatArray* stat : {&idle.allocation, &idle.allocated_bytes, &idle.active, &idle.active_bytes,
                                       &idle.requested_bytes, &idle.inactive_split, &idle.inactive_split_bytes}) {
    for (const npurt::Stat& s : *stat) EXPECT(s.current == 0);
  }
  EXPECT(idle.allocated_bytes[0].allocated == idle.allocated_bytes[0].freed);
  EXPECT(current(idle.reserved_bytes) > 0);  // cached, not returned
  EXPECT_OK(npurt::cacheEmpty(1));
  npurt::DeviceStats empty = statsOf(1);
  EXPECT(current(empty.reserved_bytes) == 0 && current(empty.segment) == 0);
  EXPECT(empty.num_device_alloc == empty.num_device_free);
  size_t freeBytes = 0, total = 0;
  EXPECT_OK(aclrtGetMemInfo(1, &freeBytes, &total));
  EXPECT(freeBytes == total);
}

void segmentSizesFollowTorchRounding() {
  void* small = alloc(100, 2);
  EXPECT(current(statsOf(2).reserved_bytes) == int64_t(2 * kMiB));
  void* medium = alloc(3 * kMiB, 2);  // < 10 MiB: from a 20 MiB segment
  EXPECT(current(statsOf(2).reserved_bytes) == int64_t(22 * kMiB));
  // >= 10 MiB and larger than the 17 MiB left in that segment: a new segment rounded up to 2 MiB.
  void* big = alloc(17 * kMiB + 1, 2);
  EXPECT(current(statsOf(2).reserved_bytes) == int64_t(40 * kMiB));
  // The 1 MiB - 512 B tail is too small to split off a large block: it stays in the allocation.
  EXPECT(statsOf(2).allocated_bytes[0].current == int64_t(512 + 3 * kMiB + 18 * kMiB));
  for (void* ptr : {small, medium, big}) EXPECT_OK(npurt::cacheFree(ptr));
  EXPECT_OK(npurt::cacheEmpty(2));
}

void smallBlocksShareASegment() {
  char* a = static_cast<char*>(alloc(1000, 3));
  char* b = static_cast<char*>(alloc(1000, 3));
  EXPECT(b == a + 1024);
  EXPECT(current(statsOf(3).segment) == 1);
  EXPECT_OK(npurt::cacheFree(a));
  EXPECT_OK(npurt::cacheFree(b));
  EXPECT_OK(npurt::cacheEmpty(3));
}

void splitThenMergeRestoresTheSegment() {
  constexpr size_t kQuarter = 512 * 1024;
  char* a = static_cast<char*>(alloc(kQuarter, 4));
  char* b = static_cast<char*>(alloc(kQuarter, 4));
  char* c = static_cast<char*>(alloc(kQuarter, 4));
  EXPECT(b == a + kQuarter && c == b + kQuarter);
  EXPECT(current(statsOf(4).inactive_split) == 1);  // the last quarter
  EXPECT_OK(npurt::cacheFree(b));
  EXPECT(current(statsOf(4).inactive_split) == 2);
  EXPECT(current(statsOf(4).inactive_split_bytes) == int64_t(2 * kQuarter));
  EXPECT_OK(npurt::cacheFree(a));  // merges with b
  EXPECT(current(statsOf(4).inactive_split) == 2);
  EXPECT_OK(npurt::cacheFree(c));  // everything merges back into one unsplit block
  EXPECT(current(statsOf(4).inactive_split) == 0 && current(statsOf(4).inactive_split_bytes) == 0);
  npurt::MemorySnapshot snapshot;
  EXPECT_OK(npurt::cacheSnapshot(&snapshot));
  size_t seen = 0;
  for (const npurt::SegmentSnapshot& segment : snapshot.segments) {
    if (segment.device != 4) continue;
    ++seen;
    EXPECT(segment.blocks.size() == 1 && segment.blocks[0].size == 2 * kMiB);
    EXPECT(segment.blocks[0].state == npurt::BlockState::kInactive);
  }
  EXPECT(seen == 1);
  char* whole = static_cast<char*>(alloc(kMiB, 4));  // the merged block is reused from its start
  EXPECT(whole == a);
  EXPECT(statsOf(4).num_device_alloc == 1);
  EXPECT_OK(npurt::cacheFree(whole));
  EXPECT_OK(npurt::cacheEmpty(4));
}

void peakTracksTheHighWaterMark() {
  void* big = alloc(4 * kMiB, 5);
  EXPECT_OK(npurt::cacheFree(big));
  void* small = alloc(kMiB, 5);
  npurt::DeviceStats stats = statsOf(5);
  EXPECT(stats.allocated_bytes[0].peak == int64_t(4 * kMiB));
  EXPECT(stats.allocated_bytes[0].current == int64_t(kMiB));
  EXPECT_OK(npurt::cacheResetPeakStats(5));
  EXPECT(statsOf(5).allocated_bytes[0].peak == int64_t(kMiB));
  EXPECT_OK(npurt::cacheResetAccumulatedStats(5));
  stats = statsOf(5);
  EXPECT(stats.allocated_bytes[0].allocated == 0 && stats.num_device_alloc == 0);
  EXPECT(stats.allocated_bytes[0].current == int64_t(kMiB));  // current values survive
  EXPECT_OK(npurt::cacheFree(small));
  EXPECT_OK(npurt::cacheEmpty(5));
}

void freedBlockIsReusedWithoutDeviceMalloc() {
  void* first = alloc(5 * kMiB, 6);
  EXPECT_OK(npurt::cacheFree(first));
  void* second = alloc(5 * kMiB, 6);
  EXPECT(second == first);
  EXPECT(statsOf(6).num_device_alloc == 1);
  EXPECT_OK(npurt::cacheFree(second));
  EXPECT_OK(npurt::cacheEmpty(6));
}

std::string labelAllocations() { return "test-context"; }

void historyRecordsTraceWithContext() {
  EXPECT_OK(npurt::cacheRecordHistory(1, 100, labelAllocations));
  void* ptr = alloc(4096, 7);
  npurt::MemorySnapshot snapshot;
  EXPECT_OK(npurt::cacheSnapshot(&snapshot));
  EXPECT(snapshot.device_traces.size() == 8);
  const auto& trace = snapshot.device_traces[7];
  EXPECT(trace.size() == 2);
  EXPECT(trace[0].action == npurt::TraceEntry::kSegmentAlloc && trace[0].size == 2 * kMiB);
  EXPECT(trace[1].action == npurt::TraceEntry::kAlloc && trace[1].size == 4096 && trace[1].context == "test-context");
  bool found = false;
  for (const auto& segment : snapshot.segments) {
    for (const auto& block : segment.blocks) {
      if (block.address == reinterpret_cast<uintptr_t>(ptr)) {
        found = block.state == npurt::BlockState::kActiveAllocated && block.requested_size == 4096 &&
                block.context == "test-context";
      }
    }
  }
  EXPECT(found);
  EXPECT_OK(npurt::cacheFree(ptr));
  EXPECT_OK(npurt::cacheSnapshot(&snapshot));
  EXPECT(snapshot.device_traces[7].size() == 4);
  EXPECT(snapshot.device_traces[7][2].action == npurt::TraceEntry::kFreeRequested);
  EXPECT(snapshot.device_traces[7][3].action == npurt::TraceEntry::kFreeCompleted);
  EXPECT_OK(npurt::cacheRecordHistory(1, 3, labelAllocations));  // shrinking keeps the newest
  EXPECT_OK(npurt::cacheSnapshot(&snapshot));
  EXPECT(snapshot.device_traces[7].size() == 3);
  EXPECT_OK(npurt::cacheRecordHistory(0, 0, nullptr));
  EXPECT_OK(npurt::cacheSnapshot(&snapshot));
  EXPECT(snapshot.device_traces[7].empty());
  EXPECT_OK(npurt::cacheEmpty(7));
}

}  // namespace

int main() {
  RUN(statsReturnToZeroAfterFrees);
  RUN(segmentSizesFollowTorchRounding);
  RUN(smallBlocksShareASegment);
  RUN(splitThenMergeRestoresTheSegment);
  RUN(peakTracksTheHighWaterMark);
  RUN(freedBlockIsReusedWithoutDeviceMalloc);
  RUN(historyRecordsTraceWithContext);
  return 0;
}
