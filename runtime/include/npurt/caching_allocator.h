// The caching allocator: one per device, on top of aclrtMalloc/aclrtFree.
//
// Small (<= 1 MiB, from 2 MiB segments) and large pools, block splitting and
// merging, stream-aware reuse: a block freed while other streams used it
// (cacheRecordStream) returns to the pool only after events recorded on those
// streams complete. Configured by PYTORCH_NPU_ALLOC_CONF (read once), e.g.
//   PYTORCH_NPU_ALLOC_CONF=max_split_size_mb:256,garbage_collection_threshold:0.8
// Keys: max_split_size_mb (> 20; blocks of this size or more are never split),
// garbage_collection_threshold (0 < t < 1: above t * allowed memory, unused
// cached segments are released before asking for more), expandable_segments
// (True/False: see cacheGetConfig), per_process_memory_fraction (0 < f <= 1).
// An unknown key or a bad value makes every allocator call fail with
// ACL_ERROR_INVALID_PARAM and a message naming the key.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "npurt/acl_rt.h"

namespace npurt {

// Allocates `size` bytes on `device` for use on `stream`. On failure frees the
// cache, retries once, then returns ACL_ERROR_RT_MEMORY_ALLOCATION with a message
// (aclGetRecentErrMsg) stating requested / allocated / reserved / capacity.
aclError cacheMalloc(void** ptr, size_t size, int32_t device, aclrtStream stream);
// Returns a block obtained from cacheMalloc to the cache (nullptr is a no-op).
aclError cacheFree(void* ptr);
// Marks `ptr` as used by `stream`, so its reuse waits for that stream's work.
aclError cacheRecordStream(void* ptr, aclrtStream stream);
// Memory from a pluggable allocator (torch.npu.change_current_allocator): registered as
// device memory of `device` so copies, kernels and pointer queries accept it; it does
// not count against the device capacity. Unregister before the owner frees it.
aclError cacheRegisterExternal(void* ptr, size_t size, int32_t device);
aclError cacheUnregisterExternal(void* ptr);
// Undoes cacheRecordStream: `ptr`'s reuse no longer waits for `stream` (torch_npu.erase_stream).
aclError cacheEraseStream(void* ptr, aclrtStream stream);
// Releases every unused cached segment of `device` (-1: all devices).
aclError cacheEmpty(int32_t device);
// Device memory is host memory: when an allocation fails after its own device's
// cache was freed, cacheMalloc also frees the other devices' caches and calls this
// hook (the pinned host cache registers one), then retries once. nullptr removes it.
using HostReclaimFn = void (*)();
aclError cacheSetHostReclaimHook(HostReclaimFn hook);

// ---------------------------------------------------------------- private pools
// A pool of segments of its own, as torch's CUDA graph pools and MemPool: blocks allocated
// while a stream or thread is routed to it come from it and return to it when freed, so
// memory a captured graph uses is never handed to other allocations. Ids are torch's
// MempoolId_t: {capture id, 0} for a graph's own pool, {0, n} for graph_pool_handle() and
// MemPool; never {0, 0} (the default pools). A pool lives while it has uses: at zero uses
// its free segments go at the next cacheEmpty (or OOM retry) and the pool with its last
// segment. Stats count its memory like any other.
struct MempoolId {
  uint64_t first = 0;
  uint64_t second = 0;
};
// Creates pool `id` on `device` with one use, or adds a use.
aclError cacheRetainPool(int32_t device, MempoolId id);
// Drops a use (the pool must exist).
aclError cacheReleasePool(int32_t device, MempoolId id);
aclError cachePoolUseCount(int32_t device, MempoolId id, int32_t* count);
// Routes allocations to pool `id` until cacheEndAllocateToPool, and adds a use (torch's
// beginAllocateToPool): those for `stream` and for streams capturing with it (a graph
// capture), or, when `stream` is NULL, those made by the calling thread (use_mem_pool).
aclError cacheBeginAllocateToPool(int32_t device, MempoolId id, aclrtStream stream);
aclError cacheEndAllocateToPool(int32_t device, MempoolId id);
// Releases the free segments of pool `id` if it has no uses left (torch's emptyCache(id)).
aclError cacheEmptyPool(int32_t device, MempoolId id);

// ---------------------------------------------------------------- statistics
// Mirrors c10::CachingDeviceAllocator::DeviceStats so the torch adapter copies
// field by field. Arrays are indexed by StatType.
enum StatType : int { kStatAggregate = 0, kStatSmallPool = 1, kStatLargePool = 2, kNumStatTypes = 3 };

struct Stat {
  int64_t current = 0;
  int64_t peak = 0;
  int64_t allocated = 0;
  int64_t freed = 0;
};
using StatArray = std::array<Stat, kNumStatTypes>;

struct DeviceStats {
  StatArray allocation;            // COUNT: client allocations
  StatArray segment;               // COUNT: aclrtMalloc'd segments
  StatArray active;                // COUNT: blocks allocated or waiting for a stream
  StatArray inactive_split;        // COUNT: free blocks inside partly used segments
  StatArray allocated_bytes;       // SUM: bytes handed to clients (rounded sizes)
  StatArray reserved_bytes;        // SUM: bytes held in segments
  StatArray active_bytes;          // SUM: bytes in active blocks
  StatArray inactive_split_bytes;  // SUM: bytes in inactive split blocks
  StatArray requested_bytes;       // SUM: bytes clients asked for (unrounded)
  int64_t num_alloc_retries = 0;   // allocations that had to free the cache and retry
  int64_t num_ooms = 0;            // allocations that failed after the retry
  Stat oversize_allocations;       // blocks > max_split_size handed out
  Stat oversize_segments;          // segments > max_split_size allocated
  int64_t num_sync_all_streams = 0;  // times the allocator waited on all pending frees
  int64_t num_device_alloc = 0;    // aclrtMalloc calls that succeeded
  int64_t num_device_free = 0;     // aclrtFree calls
  int64_t max_split_size = 0;      // bytes; -1 when unlimited (what torch.cuda reports)
};

aclError cacheGetStats(int32_t device, DeviceStats* stats);
// Sets every peak to its current value.
aclError cacheResetPeakStats(int32_t device);
// Zeroes every allocated/freed counter and the retry/oom/sync/device counters.
aclError cacheResetAccumulatedStats(int32_t device);

// Caps this process's reserved memory on `device` at fraction * capacity
// (0 <= fraction <= 1); allocations beyond it fail as OOM.
aclError cacheSetMemoryFraction(double fraction, int32_t device);
// The fraction in force on `device` (per_process_memory_fraction until set).
aclError cacheGetMemoryFraction(int32_t device, double* fraction);

// The parsed PYTORCH_NPU_ALLOC_CONF. expandable_segments here means: large
// segments are sized to the request rounded up to 2 MiB (never batched into
// 20 MiB segments) and large blocks split down to 512 B like small ones, so
// reserved memory tracks what is in use. The simulator has no virtual memory to
// map pages into an existing segment, so segments do not grow in place.
struct AllocatorConfig {
  size_t max_split_size = SIZE_MAX;
  double garbage_collection_threshold = 0.0;  // 0: off
  bool expandable_segments = false;
  double per_process_memory_fraction = 1.0;
};
// Fails with ACL_ERROR_INVALID_PARAM when PYTORCH_NPU_ALLOC_CONF is malformed.
aclError cacheGetConfig(AllocatorConfig* config);
// Parses a PYTORCH_NPU_ALLOC_CONF string (exposed for tests and the Python API).
aclError cacheParseConfig(const char* text, AllocatorConfig* config);

// ---------------------------------------------------------------- snapshots
// Shaped like torch.cuda.memory._snapshot() so the Python layer maps it 1:1
// onto the dicts torch.cuda._memory_viz renders.
enum class BlockState : int { kActiveAllocated = 0, kActivePendingFree = 1, kInactive = 2 };

struct BlockSnapshot {
  uintptr_t address = 0;
  size_t size = 0;
  size_t requested_size = 0;
  BlockState state = BlockState::kInactive;
  std::string context;  // from the history context hook at allocation time, if any
};

struct SegmentSnapshot {
  int32_t device = 0;
  uintptr_t address = 0;
  size_t total_size = 0;
  size_t allocated_size = 0;
  size_t active_size = 0;
  size_t requested_size = 0;
  aclrtStream stream = nullptr;
  bool is_large = false;
  MempoolId pool;  // {0, 0}: the default pools
  std::vector<BlockSnapshot> blocks;  // in address order
};

struct TraceEntry {
  enum Action : int {
    kAlloc = 0,          // handed a block to a client
    kFreeRequested = 1,  // client freed; block still waits for stream events
    kFreeCompleted = 2,  // block back in the pool
    kSegmentAlloc = 3,   // aclrtMalloc
    kSegmentFree = 4,    // aclrtFree
    kOom = 5,            // allocation failed (addr = free device bytes)
  };
  Action action = kAlloc;
  uintptr_t addr = 0;
  size_t size = 0;
  aclrtStream stream = nullptr;
  int64_t time_us = 0;  // wall clock, microseconds since epoch
  std::string context;
};

struct MemorySnapshot {
  std::vector<SegmentSnapshot> segments;            // all devices
  std::vector<std::vector<TraceEntry>> device_traces;  // indexed by device, oldest first
};

aclError cacheSnapshot(MemorySnapshot* snapshot);

// Called (on the allocating thread, under no allocator lock) to label each
// trace entry and block while history is on; returns "" to label nothing.
using HistoryContextFn = std::string (*)();
// Starts (enabled != 0) or stops recording trace entries, keeping at most
// maxEntries per device (oldest dropped). Stopping clears the traces.
aclError cacheRecordHistory(int32_t enabled, size_t maxEntries, HistoryContextFn context);

}  // namespace npurt
