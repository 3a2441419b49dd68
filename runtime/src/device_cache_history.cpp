// A device cache's event trace (memory history) and its snapshot of segments and blocks.
#include <algorithm>
#include <chrono>

#include "device_cache.h"

namespace npurt {
namespace {

int64_t nowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void DeviceCache::trace(TraceEntry::Action action, uintptr_t addr, size_t size, aclrtStream stream,
                        const std::string& context) {
  if (!history_.enabled) return;
  TraceEntry entry;
  entry.action = action;
  entry.addr = addr;
  entry.size = size;
  entry.stream = stream;
  entry.time_us = nowUs();
  entry.context = context;
  trace_.push_back(std::move(entry));
  while (trace_.size() > history_.maxEntries) trace_.pop_front();
}

void DeviceCache::setHistory(const HistorySettings& settings) {
  std::lock_guard<std::mutex> lock(mutex_);
  history_ = settings;
  if (!settings.enabled) trace_.clear();
  while (trace_.size() > history_.maxEntries) trace_.pop_front();
}

void DeviceCache::snapshot(MemorySnapshot* out) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<Block*> heads;
  std::vector<Pool*> pools{&smallPool_, &largePool_};
  for (auto& [key, pool] : privatePools_) pools.insert(pools.end(), {&pool->small, &pool->large});
  for (Pool* pool : pools) {
    for (Block* block : *pool) {
      if (block->prev == nullptr) heads.push_back(block);
    }
  }
  for (auto& [ptr, block] : active_) {
    if (block->prev == nullptr) heads.push_back(block);
  }
  std::sort(heads.begin(), heads.end(), [](const Block* a, const Block* b) { return a->ptr < b->ptr; });
  for (Block* head : heads) {
    SegmentSnapshot segment;
    segment.device = device_;
    segment.address = head->ptr;
    segment.stream = head->stream;
    segment.is_large = !head->small;
    if (head->owner != nullptr) segment.pool = head->owner->id;
    for (Block* block = head; block != nullptr; block = block->next) {
      BlockSnapshot entry;
      entry.address = block->ptr;
      entry.size = block->size;
      entry.requested_size = block->requested;
      entry.state = block->allocated      ? BlockState::kActiveAllocated
                    : block->eventCount > 0 ? BlockState::kActivePendingFree
                                            : BlockState::kInactive;
      entry.context = block->context;
      segment.total_size += block->size;
      if (block->allocated) {
        segment.allocated_size += block->size;
        segment.requested_size += block->requested;
      }
      if (block->allocated || block->eventCount > 0) segment.active_size += block->size;
      segment.blocks.push_back(std::move(entry));
    }
    out->segments.push_back(std::move(segment));
  }
  out->device_traces[device_].assign(trace_.begin(), trace_.end());
}

}  // namespace npurt
