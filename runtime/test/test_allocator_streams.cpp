// Stream-aware reuse: a block used by another stream is reused only after that stream's work.
#include "allocator_checks.h"
#include "kernels.h"

namespace {

aclrtStream stream(uint32_t index) {
  aclrtStream s = nullptr;
  EXPECT_OK(aclrtGetStreamByIndex(0, index, &s));
  return s;
}

void crossStreamReuseWaitsForTheEvent() {
  aclrtStream owner = stream(1), user = stream(2);
  void* a = nullptr;
  EXPECT_OK(npurt::cacheMalloc(&a, 2 * kMiB, 0, owner));
  EXPECT_OK(launchSleep(user, 300));  // `user` still reads `a` for a while
  EXPECT_OK(npurt::cacheRecordStream(a, user));
  EXPECT_OK(npurt::cacheFree(a));
  EXPECT(current(statsOf(0).active) == 1);  // pending: still active
  void* b = nullptr;
  EXPECT_OK(npurt::cacheMalloc(&b, 2 * kMiB, 0, owner));
  EXPECT(b != a);
  npurt::MemorySnapshot snapshot;
  EXPECT_OK(npurt::cacheSnapshot(&snapshot));
  bool pending = false;
  for (const auto& segment : snapshot.segments) {
    for (const auto& block : segment.blocks) {
      pending |= block.address == reinterpret_cast<uintptr_t>(a) &&
                 block.state == npurt::BlockState::kActivePendingFree;
    }
  }
  EXPECT(pending);
  EXPECT_OK(aclrtSynchronizeStream(user));
  void* c = nullptr;
  EXPECT_OK(npurt::cacheMalloc(&c, 2 * kMiB, 0, owner));
  EXPECT(c == a);
  EXPECT_OK(npurt::cacheFree(b));
  EXPECT_OK(npurt::cacheFree(c));
  EXPECT(current(statsOf(0).active) == 0);
}

void streamsHaveSeparatePools() {
  void* first = nullptr;
  EXPECT_OK(npurt::cacheMalloc(&first, 4096, 0, stream(3)));
  EXPECT_OK(npurt::cacheFree(first));
  void* other = nullptr;
  EXPECT_OK(npurt::cacheMalloc(&other, 4096, 0, stream(4)));
  EXPECT(other != first);
  EXPECT_OK(npurt::cacheFree(other));
}

void emptyCacheWaitsForPendingFrees() {
  aclrtStream owner = stream(5), user = stream(6);
  EXPECT_OK(npurt::cacheEmpty(0));
  void* a = nullptr;
  EXPECT_OK(npurt::cacheMalloc(&a, 30 * kMiB, 0, owner));
  EXPECT_OK(launchSleep(user, 100));
  EXPECT_OK(npurt::cacheRecordStream(a, user));
  EXPECT_OK(npurt::cacheFree(a));
  int64_t syncs = statsOf(0).num_sync_all_streams;
  EXPECT_OK(npurt::cacheEmpty(0));
  npurt::DeviceStats stats = statsOf(0);
  EXPECT(current(stats.reserved_bytes) == 0 && current(stats.active) == 0);
  EXPECT(stats.num_sync_all_streams == syncs + 1);
}

int32_t freeOnWorker(void* ptr) { return npurt::cacheFree(ptr) == ACL_SUCCESS ? 0 : 1; }

void waitingForPendingFreesDoesNotBlockStreamFrees() {
  // A stream task frees memory (as dropping a tensor's last reference does) while
  // empty_cache waits for an event queued behind that task.
  aclrtStream owner = stream(7), user = stream(8);
  void* a = nullptr;
  void* b = nullptr;
  EXPECT_OK(npurt::cacheMalloc(&a, 4096, 0, owner));
  EXPECT_OK(npurt::cacheMalloc(&b, 4096, 0, owner));
  EXPECT_OK(launchSleep(user, 100));
  EXPECT_OK(aclrtLaunchHostFunc(user, freeOnWorker, b));
  EXPECT_OK(npurt::cacheRecordStream(a, user));
  EXPECT_OK(npurt::cacheFree(a));
  EXPECT_OK(npurt::cacheEmpty(0));
  EXPECT_OK(aclrtSynchronizeStream(user));
  EXPECT(current(statsOf(0).allocation) == 0);
}

}  // namespace

int main() {
  RUN(crossStreamReuseWaitsForTheEvent);
  RUN(streamsHaveSeparatePools);
  RUN(emptyCacheWaitsForPendingFrees);
  RUN(waitingForPendingFreesDoesNotBlockStreamFrees);
  return 0;
}
