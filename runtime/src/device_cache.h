// One device's cache of blocks carved from aclrtMalloc'd segments.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "npurt/caching_allocator.h"

namespace npurt {

struct PrivatePool;

struct Block {
  aclrtStream stream = nullptr;  // the stream it was allocated for; pools are keyed by it
  PrivatePool* owner = nullptr;  // the private pool of its segment, null for the default pools
  uintptr_t ptr = 0;
  size_t size = 0;
  size_t requested = 0;
  bool small = false;
  bool allocated = false;
  int eventCount = 0;  // events that must complete before the block is free again
  Block* prev = nullptr;  // neighbours inside the same segment
  Block* next = nullptr;
  std::unordered_set<aclrtStream> streamUses;
  std::string context;

  bool isSplit() const { return prev != nullptr || next != nullptr; }
};

// An event owned by the cache, destroyed with the last reference.
class StreamEvent {
 public:
  explicit StreamEvent(aclrtStream stream);
  ~StreamEvent();
  StreamEvent(const StreamEvent&) = delete;
  StreamEvent& operator=(const StreamEvent&) = delete;
  aclrtEvent get() const { return event_; }

 private:
  aclrtEvent event_ = nullptr;
};

// Best fit within a stream: ordered by (stream, size, address).
struct BlockOrder {
  bool operator()(const Block* a, const Block* b) const;
};
using Pool = std::set<Block*, BlockOrder>;

// A private pool (npurt/caching_allocator.h): free lists of its own segments.
struct PrivatePool {
  MempoolId id;
  Pool small;
  Pool large;
  int32_t useCount = 0;
  int64_t segments = 0;  // its segments still allocated
};

// Whether trace entries are being kept, shared by every device's cache.
struct HistorySettings {
  bool enabled = false;
  size_t maxEntries = 0;
};

class DeviceCache {
 public:
  // `reclaimOthers(device)` frees memory held elsewhere (other caches, the pinned
  // cache) before an allocation fails; it is called with this cache unlocked.
  using ReclaimFn = void (*)(int32_t device);
  DeviceCache(int32_t device, const AllocatorConfig& config, ReclaimFn reclaimOthers);

  int32_t device() const { return device_; }

  aclError malloc(void** ptr, size_t size, aclrtStream stream, const std::string& context);
  aclError free(void* ptr, const std::string& context);
  aclError recordStream(void* ptr, aclrtStream stream);
  aclError eraseStream(void* ptr, aclrtStream stream);
  aclError emptyCache();

  aclError retainPool(MempoolId id);
  aclError releasePool(MempoolId id);
  aclError poolUseCount(MempoolId id, int32_t* count);
  aclError beginAllocateToPool(MempoolId id, aclrtStream stream);
  aclError endAllocateToPool(MempoolId id);
  aclError emptyPool(MempoolId id);

  DeviceStats stats();
  void resetPeakStats();
  void resetAccumulatedStats();
  void setMemoryFraction(double fraction);
  double memoryFraction();

  void snapshot(MemorySnapshot* out);
  void setHistory(const HistorySettings& settings);

 private:
  using PoolKey = std::pair<uint64_t, uint64_t>;
  Pool& poolFor(PrivatePool* owner, bool small) {
    if (owner != nullptr) return small ? owner->small : owner->large;
    return small ? smallPool_ : largePool_;
  }
  Pool& poolOf(const Block* block) { return poolFor(block->owner, block->small); }
  // The private pool an allocation for `stream` on this thread goes to (null: the default pools).
  PrivatePool* routedPool(aclrtStream stream);
  PrivatePool* findPool(MempoolId id);
  // Frees of blocks used on other streams wait for events; while a capture is underway such
  // an event would be captured instead of recorded, so those frees wait here until it ends.
  void processDeferredFrees();
  void queueStreamUseEvents(Block* block);
  Block* takeFreeBlock(Pool& pool, aclrtStream stream, size_t size);
  Block* allocateSegment(size_t size, aclrtStream stream, bool small, const std::string& context, PrivatePool* owner);
  Block* carve(Block* block, size_t size, size_t requested, const std::string& context);
  void freeBlock(Block* block, const std::string& context);
  size_t mergeInto(Block* dst, Block* src, Pool& pool);
  void releaseSegment(Block* block);
  // Releases unused unsplit cached segments, largest first, until `target`
  // bytes stay reserved (0: release all of them).
  void releaseCachedSegments(size_t target);
  void processEvents();
  // Waits for every pending free's event with `lock` released: a stream task may
  // free memory (dropping the last reference to a tensor) before the event it
  // precedes can complete, and that free needs this lock.
  void synchronizeAndFreeEvents(std::unique_lock<std::mutex>& lock);
  aclError outOfMemory(size_t requested, size_t segmentSize, const std::string& context);
  void trace(TraceEntry::Action action, uintptr_t addr, size_t size, aclrtStream stream, const std::string& context);
  size_t allowedBytes() const;

  const int32_t device_;
  const AllocatorConfig config_;
  const ReclaimFn reclaimOthers_;
  double fraction_;
  std::mutex mutex_;
  Pool smallPool_;
  Pool largePool_;
  std::unordered_map<uintptr_t, Block*> active_;  // allocated or waiting for events
  struct PendingFree {
    std::shared_ptr<StreamEvent> event;  // shared with waiters that released the lock
    Block* block;
  };
  std::vector<PendingFree> pendingFrees_;
  std::vector<Block*> deferredFrees_;
  std::map<PoolKey, std::unique_ptr<PrivatePool>> privatePools_;
  struct AllocRule {
    PoolKey pool;
    aclrtStream stream;  // null: allocations of `thread`
    std::thread::id thread;
  };
  std::vector<AllocRule> allocRules_;
  DeviceStats stats_;
  HistorySettings history_;
  std::deque<TraceEntry> trace_;
  std::string lastMallocError_;  // why aclrtMalloc last failed, for the OOM message
};

}  // namespace npurt
