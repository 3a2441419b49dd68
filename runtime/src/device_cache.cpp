// The block logic of torch's CUDACachingAllocator, on aclrtMalloc segments.
#include "device_cache.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "device.h"
#include "error.h"
#include "graph_capture.h"
#include "memory.h"

namespace npurt {
namespace {

constexpr size_t kMinBlockSize = 512;         // every block is a multiple of this
constexpr size_t kSmallSize = size_t(1) << 20;   // largest request served by the small pool
constexpr size_t kSmallBuffer = size_t(2) << 20;   // small-pool segment size
constexpr size_t kLargeBuffer = size_t(20) << 20;  // segment size for large requests below kMinLargeAlloc
constexpr size_t kMinLargeAlloc = size_t(10) << 20;
constexpr size_t kRoundLarge = size_t(2) << 20;  // larger segments are rounded to this

size_t roundUp(size_t size, size_t multiple) { return (size + multiple - 1) / multiple * multiple; }

size_t segmentSizeFor(size_t size, bool expandable) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (!expandable && size < kMinLargeAlloc) return kLargeBuffer;
  return roundUp(size, kRoundLarge);
}

void update(Stat& stat, int64_t amount) {
  stat.current += amount;
  stat.peak = std::max(stat.peak, stat.current);
  if (amount > 0) stat.allocated += amount;
  if (amount < 0) stat.freed -= amount;
}

void update(StatArray& stats, bool small, int64_t amount) {
  update(stats[kStatAggregate], amount);
  update(stats[small ? kStatSmallPool : kStatLargePool], amount);
}

std::string gib(size_t bytes) {
  char buf[48];
  if (bytes >= (size_t(1) << 30)) {
    std::snprintf(buf, sizeof(buf), "%.2f GiB", static_cast<double>(bytes) / (1 << 30));
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f MiB", static_cast<double>(bytes) / (1 << 20));
  }
  return buf;
}

}  // namespace

bool BlockOrder::operator()(const Block* a, const Block* b) const {
  if (a->stream != b->stream) return reinterpret_cast<uintptr_t>(a->stream) < reinterpret_cast<uintptr_t>(b->stream);
  if (a->size != b->size) return a->size < b->size;
  return a->ptr < b->ptr;
}

StreamEvent::StreamEvent(aclrtStream stream) {
  // Neither call can fail: the arguments are valid.
  aclrtCreateEventWithFlag(&event_, 0);
  aclrtRecordEvent(event_, stream);
}

StreamEvent::~StreamEvent() { aclrtDestroyEvent(event_); }

DeviceCache::DeviceCache(int32_t device, const AllocatorConfig& config, ReclaimFn reclaimOthers)
    : device_(device), config_(config), reclaimOthers_(reclaimOthers), fraction_(config.per_process_memory_fraction) {
  stats_.max_split_size =
      config.max_split_size == SIZE_MAX ? -1 : static_cast<int64_t>(config.max_split_size);
}

size_t DeviceCache::allowedBytes() const { return static_cast<size_t>(fraction_ * deviceCapacity()); }

aclError DeviceCache::malloc(void** ptr, size_t size, aclrtStream stream, const std::string& context) {
  std::unique_lock<std::mutex> lock(mutex_);
  // Beyond the capacity nothing can help, and rounding such sizes could overflow.
  lastMallocError_.clear();
  if (size > deviceCapacity()) return outOfMemory(size, size, context);
  processDeferredFrees();
  processEvents();
  size_t rounded = size < kMinBlockSize ? kMinBlockSize : roundUp(size, kMinBlockSize);
  bool small = rounded <= kSmallSize;
  PrivatePool* owner = routedPool(stream);
  Pool& pool = poolFor(owner, small);
  Block* block = takeFreeBlock(pool, stream, rounded);
  size_t segment = segmentSizeFor(rounded, config_.expandable_segments);
  if (block == nullptr && config_.garbage_collection_threshold > 0) {
    size_t limit = static_cast<size_t>(config_.garbage_collection_threshold * allowedBytes());
    size_t reserved = static_cast<size_t>(stats_.reserved_bytes[kStatAggregate].current);
    if (reserved + segment > limit) releaseCachedSegments(limit > segment ? limit - segment : 0);
  }
  if (block == nullptr) block = allocateSegment(segment, stream, small, context, owner);
  if (block == nullptr) {
    // Free the cache and retry once: blocks waiting on events and unused segments
    // may add up to what this request needs.
    ++stats_.num_alloc_retries;
    // Waiting on events is a synchronizing call a capture may forbid (torch skips it too).
    if (!captureUnderwayOn(device_)) synchronizeAndFreeEvents(lock);
    releaseCachedSegments(0);
    if (reclaimOthers_ != nullptr && lastMallocError_.find("host") != std::string::npos) {
      // The host is short, not this device: other caches may hold what it needs.
      lock.unlock();
      reclaimOthers_(device_);
      lock.lock();
      processEvents();
    }
    block = takeFreeBlock(pool, stream, rounded);
    if (block == nullptr) block = allocateSegment(segment, stream, small, context, owner);
  }
  if (block == nullptr) return outOfMemory(size, segment, context);
  block = carve(block, rounded, size, context);
  *ptr = reinterpret_cast<void*>(block->ptr);
  return ACL_SUCCESS;
}

Block* DeviceCache::takeFreeBlock(Pool& pool, aclrtStream stream, size_t size) {
  Block key;
  key.stream = stream;
  key.size = size;
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->stream != stream) return nullptr;
  Block* block = *it;
  // As torch: oversize blocks serve only oversize requests, and only when they waste < 20 MiB.
  if (size < config_.max_split_size && block->size >= config_.max_split_size) return nullptr;
  if (size >= config_.max_split_size && block->size >= size + kLargeBuffer) return nullptr;
  pool.erase(it);
  return block;
}

Block* DeviceCache::allocateSegment(size_t size, aclrtStream stream, bool small, const std::string& context,
                                    PrivatePool* owner) {
  if (static_cast<size_t>(stats_.reserved_bytes[kStatAggregate].current) + size > allowedBytes()) return nullptr;
  void* ptr = nullptr;
  if (aclrtMalloc(&ptr, size, device_) != ACL_SUCCESS) {
    lastMallocError_ = aclGetRecentErrMsg();
    return nullptr;
  }
  Block* block = new Block();
  block->stream = stream;
  block->ptr = reinterpret_cast<uintptr_t>(ptr);
  block->size = size;
  block->small = small;
  block->owner = owner;
  if (owner != nullptr) ++owner->segments;
  update(stats_.segment, small, 1);
  update(stats_.reserved_bytes, small, static_cast<int64_t>(size));
  if (size >= config_.max_split_size) update(stats_.oversize_segments, 1);
  ++stats_.num_device_alloc;
  trace(TraceEntry::kSegmentAlloc, block->ptr, size, stream, context);
  return block;
}

Block* DeviceCache::carve(Block* block, size_t size, size_t requested, const std::string& context) {
  bool alreadySplit = block->isSplit();
  bool small = block->small;
  size_t remaining = block->size - size;
  bool split = small || config_.expandable_segments ? remaining >= kMinBlockSize
                                                    : size < config_.max_split_size && remaining > kSmallSize;
  if (split) {
    Block* rest = block;
    block = new Block();
    block->stream = rest->stream;
    block->owner = rest->owner;
    block->small = small;
    block->ptr = rest->ptr;
    block->size = size;
    block->prev = rest->prev;
    if (block->prev != nullptr) block->prev->next = block;
    block->next = rest;
    rest->prev = block;
    rest->ptr += size;
    rest->size -= size;
    poolOf(rest).insert(rest);
    if (alreadySplit) {
      update(stats_.inactive_split_bytes, small, -static_cast<int64_t>(size));
    } else {
      update(stats_.inactive_split_bytes, small, static_cast<int64_t>(rest->size));
      update(stats_.inactive_split, small, 1);
    }
  } else if (alreadySplit) {
    update(stats_.inactive_split_bytes, small, -static_cast<int64_t>(block->size));
    update(stats_.inactive_split, small, -1);
  }
  block->allocated = true;
  block->requested = requested;
  block->context = context;
  active_[block->ptr] = block;
  update(stats_.allocation, small, 1);
  update(stats_.allocated_bytes, small, static_cast<int64_t>(block->size));
  update(stats_.active, small, 1);
  update(stats_.active_bytes, small, static_cast<int64_t>(block->size));
  update(stats_.requested_bytes, small, static_cast<int64_t>(requested));
  if (block->size >= config_.max_split_size) update(stats_.oversize_allocations, 1);
  trace(TraceEntry::kAlloc, block->ptr, block->size, block->stream, context);
  return block;
}

aclError DeviceCache::free(void* ptr, const std::string& context) {
  std::lock_guard<std::mutex> lock(mutex_);
  processDeferredFrees();
  auto it = active_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == active_.end() || !it->second->allocated) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%p", ptr);
    return fail(ACL_ERROR_INVALID_PARAM, std::string("cacheFree: ") + buf + " is not a live block of device " +
                                             std::to_string(device_) + " (double free, or not from cacheMalloc)");
  }
  Block* block = it->second;
  block->allocated = false;
  update(stats_.allocation, block->small, -1);
  update(stats_.allocated_bytes, block->small, -static_cast<int64_t>(block->size));
  update(stats_.requested_bytes, block->small, -static_cast<int64_t>(block->requested));
  if (block->size >= config_.max_split_size) update(stats_.oversize_allocations, -1);
  trace(TraceEntry::kFreeRequested, block->ptr, block->size, block->stream, context);
  if (block->streamUses.empty()) {
    freeBlock(block, context);
    return ACL_SUCCESS;
  }
  // Other streams may still use the memory: it becomes free once their queued work has run.
  if (captureUnderwayOn(device_)) {
    deferredFrees_.push_back(block);
  } else {
    queueStreamUseEvents(block);
  }
  return ACL_SUCCESS;
}

void DeviceCache::queueStreamUseEvents(Block* block) {
  for (aclrtStream user : block->streamUses) {
    pendingFrees_.push_back(PendingFree{std::make_shared<StreamEvent>(user), block});
    ++block->eventCount;
  }
  block->streamUses.clear();
}

void DeviceCache::processDeferredFrees() {
  if (deferredFrees_.empty() || captureUnderwayOn(device_)) return;
  for (Block* block : deferredFrees_) queueStreamUseEvents(block);
  deferredFrees_.clear();
}

PrivatePool* DeviceCache::routedPool(aclrtStream stream) {
  if (allocRules_.empty()) return nullptr;
  aclrtStream origin = captureOriginOf(stream);
  std::thread::id self = std::this_thread::get_id();
  for (const AllocRule& rule : allocRules_) {
    bool match = rule.stream != nullptr ? rule.stream == stream || rule.stream == origin : rule.thread == self;
    if (match) return privatePools_.at(rule.pool).get();
  }
  return nullptr;
}

void DeviceCache::freeBlock(Block* block, const std::string& context) {
  uintptr_t originalPtr = block->ptr;
  size_t originalSize = block->size;
  bool small = block->small;
  Pool& pool = poolOf(block);
  active_.erase(originalPtr);
  block->requested = 0;
  block->context.clear();
  int64_t netSplits = 0;
  int64_t netSplitBytes = 0;
  for (Block* neighbour : {block->prev, block->next}) {
    size_t subsumed = mergeInto(block, neighbour, pool);
    if (subsumed > 0) {
      netSplits -= 1;
      netSplitBytes -= static_cast<int64_t>(subsumed);
    }
  }
  pool.insert(block);
  if (block->isSplit()) {
    netSplits += 1;
    netSplitBytes += static_cast<int64_t>(block->size);
  }
  update(stats_.inactive_split, small, netSplits);
  update(stats_.inactive_split_bytes, small, netSplitBytes);
  update(stats_.active, small, -1);
  update(stats_.active_bytes, small, -static_cast<int64_t>(originalSize));
  trace(TraceEntry::kFreeCompleted, originalPtr, originalSize, block->stream, context);
}

size_t DeviceCache::mergeInto(Block* dst, Block* src, Pool& pool) {
  if (src == nullptr || src->allocated || src->eventCount > 0) return 0;
  pool.erase(src);
  if (dst->prev == src) {
    dst->ptr = src->ptr;
    dst->prev = src->prev;
    if (dst->prev != nullptr) dst->prev->next = dst;
  } else {
    dst->next = src->next;
    if (dst->next != nullptr) dst->next->prev = dst;
  }
  size_t subsumed = src->size;
  dst->size += subsumed;
  delete src;
  return subsumed;
}

void DeviceCache::releaseSegment(Block* block) {
  poolOf(block).erase(block);
  if (PrivatePool* owner = block->owner) {
    --owner->segments;
    // A pool with no uses goes with its last segment.
    if (owner->useCount == 0 && owner->segments == 0) privatePools_.erase(PoolKey{owner->id.first, owner->id.second});
  }
  aclrtFree(reinterpret_cast<void*>(block->ptr));  // cannot fail: the segment came from aclrtMalloc
  update(stats_.segment, block->small, -1);
  update(stats_.reserved_bytes, block->small, -static_cast<int64_t>(block->size));
  if (block->size >= config_.max_split_size) update(stats_.oversize_segments, -1);
  ++stats_.num_device_free;
  trace(TraceEntry::kSegmentFree, block->ptr, block->size, block->stream, "");
  delete block;
}

void DeviceCache::releaseCachedSegments(size_t target) {
  std::vector<Block*> unused;
  std::vector<Pool*> pools{&smallPool_, &largePool_};
  // Private pools keep their memory while a graph or MemPool uses them.
  for (auto& [key, pool] : privatePools_) {
    if (pool->useCount == 0) pools.insert(pools.end(), {&pool->small, &pool->large});
  }
  for (Pool* pool : pools) {
    for (Block* block : *pool) {
      if (!block->isSplit()) unused.push_back(block);
    }
  }
  std::sort(unused.begin(), unused.end(), [](const Block* a, const Block* b) { return a->size > b->size; });
  for (Block* block : unused) {
    if (target > 0 && static_cast<size_t>(stats_.reserved_bytes[kStatAggregate].current) <= target) break;
    releaseSegment(block);
  }
}

void DeviceCache::processEvents() {
  auto done = std::remove_if(pendingFrees_.begin(), pendingFrees_.end(), [this](PendingFree& pending) {
    int32_t complete = 0;
    aclrtQueryEventStatus(pending.event->get(), &complete);
    if (!complete) return false;
    if (--pending.block->eventCount == 0) freeBlock(pending.block, "");
    return true;
  });
  pendingFrees_.erase(done, pendingFrees_.end());
}

void DeviceCache::synchronizeAndFreeEvents(std::unique_lock<std::mutex>& lock) {
  ++stats_.num_sync_all_streams;
  std::vector<std::shared_ptr<StreamEvent>> events;
  for (const PendingFree& pending : pendingFrees_) events.push_back(pending.event);
  lock.unlock();
  for (const auto& event : events) aclrtSynchronizeEvent(event->get());
  lock.lock();
  processEvents();
}

aclError DeviceCache::outOfMemory(size_t requested, size_t segmentSize, const std::string& context) {
  ++stats_.num_ooms;
  size_t capacity = deviceCapacity();
  size_t freeBytes = capacity - deviceMemoryUsed(device_);
  size_t allocated = static_cast<size_t>(stats_.allocated_bytes[kStatAggregate].current);
  size_t reserved = static_cast<size_t>(stats_.reserved_bytes[kStatAggregate].current);
  trace(TraceEntry::kOom, freeBytes, requested, nullptr, context);
  std::string message = "NPU out of memory on device " + std::to_string(device_) + ". Tried to allocate " +
                        gib(requested) + " (a " + gib(segmentSize) + " segment); the device has a total capacity of " +
                        gib(capacity) + " of which " + gib(freeBytes) + " is free. This process has " + gib(allocated) +
                        " allocated and " + gib(reserved) + " reserved by the caching allocator (" +
                        gib(reserved - allocated) + " reserved but unallocated).";
  if (!lastMallocError_.empty()) message += " The last segment allocation failed with: " + lastMallocError_ + ".";
  if (captureUnderwayOn(device_)) {
    message += " An NPU graph capture is underway on this device: its allocations come from the graph's private pool "
               "and it keeps that memory for as long as the graph lives.";
  }
  if (fraction_ < 1.0) {
    message += " The per-process memory fraction " + std::to_string(fraction_) + " caps this process at " +
               gib(allowedBytes()) + ".";
  }
  message +=
      " Free tensors you no longer need, or lower the batch size; if reserved but unallocated memory is large, call "
      "torch.npu.empty_cache() or set PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:<N> or expandable_segments:True to "
      "reduce fragmentation.";
  return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, message);
}

aclError DeviceCache::recordStream(void* ptr, aclrtStream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = active_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == active_.end() || !it->second->allocated) {
    return fail(ACL_ERROR_INVALID_PARAM, "cacheRecordStream: the pointer is not a live block from cacheMalloc");
  }
  if (stream != it->second->stream) it->second->streamUses.insert(stream);
  return ACL_SUCCESS;
}

aclError DeviceCache::eraseStream(void* ptr, aclrtStream stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = active_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == active_.end() || !it->second->allocated) {
    return fail(ACL_ERROR_INVALID_PARAM, "cacheEraseStream: the pointer is not a live block from cacheMalloc");
  }
  it->second->streamUses.erase(stream);
  return ACL_SUCCESS;
}

aclError DeviceCache::emptyCache() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!captureUnderwayOn(device_)) synchronizeAndFreeEvents(lock);
  releaseCachedSegments(0);
  return ACL_SUCCESS;
}

}  // namespace npurt
