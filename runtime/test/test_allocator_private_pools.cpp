// Private pools: capture and thread routing, reuse only inside the pool, release and snapshot.
#include <thread>

#include "allocator_checks.h"
#include "npurt/acl_mdl.h"

namespace {

aclrtStream stream(uint32_t index) {
  aclrtStream s = nullptr;
  EXPECT_OK(aclrtGetStreamByIndex(0, index, &s));
  return s;
}

void* alloc(size_t size, aclrtStream s) {
  void* ptr = nullptr;
  EXPECT_OK(npurt::cacheMalloc(&ptr, size, 0, s));
  return ptr;
}

const npurt::MempoolId kPool{0, 7};

void captureAllocationsComeFromThePoolAndStayThere() {
  aclrtStream s = stream(2);
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_OK(npurt::cacheBeginAllocateToPool(0, kPool, s));
  int32_t uses = 0;
  EXPECT_OK(npurt::cachePoolUseCount(0, kPool, &uses));
  EXPECT(uses == 1);
  int64_t segmentsBefore = current(statsOf(0).segment);
  void* inside = alloc(4096, s);
  EXPECT(current(statsOf(0).segment) == segmentsBefore + 1);  // a segment of its own
  EXPECT_OK(npurt::cacheFree(inside));
  void* again = alloc(4096, s);
  EXPECT(again == inside);  // freed blocks return to the pool
  EXPECT_OK(npurt::cacheFree(again));
  EXPECT_OK(npurt::cacheEndAllocateToPool(0, kPool));
  aclmdlRI graph = nullptr;
  EXPECT_OK(aclmdlRICaptureEnd(s, &graph));
  void* outside = alloc(4096, s);
  EXPECT(outside != inside);  // never handed to an allocation outside the pool
  EXPECT_OK(npurt::cacheEmpty(0));
  EXPECT(current(statsOf(0).segment) >= segmentsBefore + 1);  // the graph's pool keeps its segment
  EXPECT_OK(npurt::cacheReleasePool(0, kPool));
  EXPECT_OK(npurt::cacheFree(outside));
  EXPECT_OK(npurt::cacheEmpty(0));
  EXPECT(current(statsOf(0).segment) == 0);
  EXPECT_OK(npurt::cachePoolUseCount(0, kPool, &uses));
  EXPECT(uses == 0);
  EXPECT(npurt::cacheReleasePool(0, kPool) == ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclmdlRIDestroy(graph));
}

void threadRoutingCoversOnlyTheCallingThread() {
  const npurt::MempoolId pool{0, 8};
  EXPECT_OK(npurt::cacheRetainPool(0, pool));  // MemPool's own use
  EXPECT_OK(npurt::cacheBeginAllocateToPool(0, pool, nullptr));
  EXPECT(npurt::cacheBeginAllocateToPool(0, pool, nullptr) == ACL_ERROR_INVALID_PARAM);
  int32_t uses = 0;
  EXPECT_OK(npurt::cachePoolUseCount(0, pool, &uses));
  EXPECT(uses == 2);
  void* mine = alloc(1024, nullptr);
  void* theirs = nullptr;
  std::thread([&] { theirs = alloc(1024, nullptr); }).join();
  npurt::MemorySnapshot snapshot;
  EXPECT_OK(npurt::cacheSnapshot(&snapshot));
  int inPool = 0;
  for (const npurt::SegmentSnapshot& segment : snapshot.segments) {
    for (const npurt::BlockSnapshot& block : segment.blocks) {
      if (block.address == reinterpret_cast<uintptr_t>(mine)) EXPECT(segment.pool.second == 8 && ++inPool);
      if (block.address == reinterpret_cast<uintptr_t>(theirs)) EXPECT(segment.pool.second == 0);
    }
  }
  EXPECT(inPool == 1);
  EXPECT_OK(npurt::cacheEndAllocateToPool(0, pool));
  EXPECT_OK(npurt::cacheReleasePool(0, pool));
  EXPECT_OK(npurt::cacheReleasePool(0, pool));
  EXPECT_OK(npurt::cacheFree(mine));
  EXPECT_OK(npurt::cacheFree(theirs));
  EXPECT_OK(npurt::cacheEmptyPool(0, pool));
  EXPECT_OK(npurt::cacheEmpty(0));
  EXPECT(current(statsOf(0).segment) == 0);
  EXPECT(npurt::cacheRetainPool(0, npurt::MempoolId{}) == ACL_ERROR_INVALID_PARAM);
}

void freesOfBlocksUsedOnOtherStreamsWaitForTheCaptureToEnd() {
  aclrtStream s = stream(3);
  aclrtStream other = stream(4);
  void* shared = alloc(2048, s);
  EXPECT_OK(npurt::cacheRecordStream(shared, other));
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_OK(npurt::cacheFree(shared));  // no event may be recorded on a capturing device now
  aclmdlRI graph = nullptr;
  EXPECT_OK(aclmdlRICaptureEnd(s, &graph));
  EXPECT_OK(aclrtSynchronizeStream(other));
  void* next = alloc(2048, s);  // processes the deferred free
  EXPECT_OK(aclrtSynchronizeStream(other));
  EXPECT_OK(npurt::cacheFree(next));
  EXPECT_OK(npurt::cacheEmpty(0));
  EXPECT(current(statsOf(0).active) == 0);
  EXPECT_OK(aclmdlRIDestroy(graph));
}

}  // namespace

int main() {
  RUN(captureAllocationsComeFromThePoolAndStayThere);
  RUN(threadRoutingCoversOnlyTheCallingThread);
  RUN(freesOfBlocksUsedOnOtherStreamsWaitForTheCaptureToEnd);
  return 0;
}
