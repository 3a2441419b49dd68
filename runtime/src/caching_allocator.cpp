// The caching allocator's entry points: find the device's cache, check arguments.
#include "npurt/caching_allocator.h"

#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "device.h"
#include "device_cache.h"
#include "error.h"
#include "memory.h"
#include "stream.h"

namespace npurt {
namespace {

struct AllocatorState {
  std::mutex mutex;
  bool configLoaded = false;
  AllocatorConfig config;
  std::string configError;
  std::vector<DeviceCache*> caches;  // by device, created on first use
  HistorySettings history;
  HistoryContextFn contextFn = nullptr;
  HostReclaimFn reclaim = nullptr;
};

// Leaked on purpose: stream workers and torch's static destructors may free
// blocks while the process exits, after a destroyed allocator would be gone.
AllocatorState& allocatorState() {
  static AllocatorState* state = new AllocatorState();
  return *state;
}

// Requires state.mutex.
aclError loadConfig(AllocatorState& state) {
  if (!state.configLoaded) {
    state.configLoaded = true;
    if (const char* text = std::getenv("PYTORCH_NPU_ALLOC_CONF")) {
      if (cacheParseConfig(text, &state.config) != ACL_SUCCESS) state.configError = aclGetRecentErrMsg();
    }
  }
  if (!state.configError.empty()) return fail(ACL_ERROR_INVALID_PARAM, state.configError);
  return ACL_SUCCESS;
}

void reclaimHostMemory(int32_t failingDevice);

aclError cacheFor(int32_t device, const char* caller, DeviceCache** cache) {
  if (aclError rc = checkDevice(device, caller)) return rc;
  AllocatorState& state = allocatorState();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (aclError rc = loadConfig(state)) return rc;
  if (state.caches.size() <= static_cast<size_t>(device)) state.caches.resize(device + 1, nullptr);
  if (state.caches[device] == nullptr) {
    state.caches[device] = new DeviceCache(device, state.config, &reclaimHostMemory);
    state.caches[device]->setHistory(state.history);
  }
  *cache = state.caches[device];
  return ACL_SUCCESS;
}

std::vector<DeviceCache*> existingCaches() {
  AllocatorState& state = allocatorState();
  std::lock_guard<std::mutex> lock(state.mutex);
  std::vector<DeviceCache*> caches;
  for (DeviceCache* cache : state.caches) {
    if (cache != nullptr) caches.push_back(cache);
  }
  return caches;
}

// Device memory is host memory: what other devices cache and the pinned cache holds
// may be what a failed allocation needs. Called with no allocator lock held.
void reclaimHostMemory(int32_t failingDevice) {
  HostReclaimFn reclaim = nullptr;
  {
    AllocatorState& state = allocatorState();
    std::lock_guard<std::mutex> lock(state.mutex);
    reclaim = state.reclaim;
  }
  for (DeviceCache* other : existingCaches()) {
    if (other->device() != failingDevice) other->emptyCache();
  }
  if (reclaim != nullptr) reclaim();
}

// Asked outside every allocator lock: the hook may take the GIL.
std::string historyContext() {
  HistoryContextFn fn = nullptr;
  {
    AllocatorState& state = allocatorState();
    std::lock_guard<std::mutex> lock(state.mutex);
    if (state.history.enabled) fn = state.contextFn;
  }
  return fn != nullptr ? fn() : std::string();
}

aclError cacheOwning(const void* ptr, const char* caller, DeviceCache** cache) {
  MemoryRange range = findMemoryRange(ptr);
  if (range.location != ACL_MEM_LOCATION_DEVICE) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%p", ptr);
    return fail(ACL_ERROR_INVALID_PARAM, std::string(caller) + ": " + buf + " is not device memory from cacheMalloc");
  }
  return cacheFor(range.device, caller, cache);
}

}  // namespace

aclError cacheMalloc(void** ptr, size_t size, int32_t device, aclrtStream stream) {
  if (ptr == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "cacheMalloc: ptr is null");
  *ptr = nullptr;
  DeviceCache* cache = nullptr;
  if (aclError rc = cacheFor(device, "cacheMalloc", &cache)) return rc;
  if (size == 0) return ACL_SUCCESS;  // as torch: an empty allocation is a null pointer
  if (stream == nullptr) {
    aclrtGetStreamByIndex(device, 0, &stream);  // cannot fail: the device was checked
  } else if (stream->device != device) {
    return fail(ACL_ERROR_INVALID_PARAM, "cacheMalloc: the stream belongs to device " +
                                             std::to_string(stream->device) + ", not device " + std::to_string(device));
  }
  return cache->malloc(ptr, size, stream, historyContext());
}

aclError cacheSetHostReclaimHook(HostReclaimFn hook) {
  AllocatorState& state = allocatorState();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.reclaim = hook;
  return ACL_SUCCESS;
}

aclError cacheFree(void* ptr) {
  if (ptr == nullptr) return ACL_SUCCESS;
  DeviceCache* cache = nullptr;
  if (aclError rc = cacheOwning(ptr, "cacheFree", &cache)) return rc;
  return cache->free(ptr, historyContext());
}

aclError cacheRecordStream(void* ptr, aclrtStream stream) {
  if (stream == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "cacheRecordStream: stream is null");
  if (ptr == nullptr) return ACL_SUCCESS;  // empty tensors own no memory
  DeviceCache* cache = nullptr;
  if (aclError rc = cacheOwning(ptr, "cacheRecordStream", &cache)) return rc;
  return cache->recordStream(ptr, stream);
}

aclError cacheEraseStream(void* ptr, aclrtStream stream) {
  if (stream == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "cacheEraseStream: stream is null");
  if (ptr == nullptr) return ACL_SUCCESS;
  DeviceCache* cache = nullptr;
  if (aclError rc = cacheOwning(ptr, "cacheEraseStream", &cache)) return rc;
  return cache->eraseStream(ptr, stream);
}

aclError cacheEmpty(int32_t device) {
  if (device != -1) {
    DeviceCache* cache = nullptr;
    if (aclError rc = cacheFor(device, "cacheEmpty", &cache)) return rc;
    return cache->emptyCache();
  }
  for (DeviceCache* cache : existingCaches()) cache->emptyCache();
  return ACL_SUCCESS;
}

aclError cacheRetainPool(int32_t device, MempoolId id) {
  DeviceCache* cache = nullptr;
  if (aclError rc = cacheFor(device, "cacheRetainPool", &cache)) return rc;
  return cache->retainPool(id);
}

aclError cacheReleasePool(int32_t device, MempoolId id) {
  DeviceCache* cache = nullptr;
  if (aclError rc = cacheFor(device, "cacheReleasePool", &cache)) return rc;
  return cache->releasePool(id);
}

aclError cachePoolUseCount(int32_t device, MempoolId id, int32_t* count) {
  if (count == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "cachePoolUseCount: count is null");
  DeviceCache* cache = nullptr;
  if (aclError rc = cacheFor(device, "cachePoolUseCount", &cache)) return rc;
  return cache->poolUseCount(id, count);
}

aclError cacheBeginAllocateToPool(int32_t device, MempoolId id, aclrtStream stream) {
  DeviceCache* cache = nullptr;
  if (aclError rc = cacheFor(device, "cacheBeginAllocateToPool", &cache)) return rc;
  if (stream != nullptr && stream->device != device) {
    return fail(ACL_ERROR_INVALID_PARAM, "cacheBeginAllocateToPool: the stream belongs to device " +
                                             std::to_string(stream->device) + ", not device " + std::to_string(device));
  }
  return cache->beginAllocateToPool(id, stream);
}

aclError cacheEndAllocateToPool(int32_t device, MempoolId id) {
  DeviceCache* cache = nullptr;
  if (aclError rc = cacheFor(device, "cacheEndAllocateToPool", &cache)) return rc;
  return cache->endAllocateToPool(id);
}

aclError cacheEmptyPool(int32_t device, MempoolId id) {
  DeviceCache* cache = nullptr;
  if (aclError rc = cacheFor(device, "cacheEmptyPool", &cache)) return rc;
  return cache->emptyPool(id);
}

aclError cacheGetStats(int32_t device, DeviceStats* stats) {
  if (stats == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "cacheGetStats: stats is null");
  DeviceCache* cache = nullptr;
  if (aclError rc = cacheFor(device, "cacheGetStats", &cache)) return rc;
  *stats = cache->stats();
  return ACL_SUCCESS;
}

aclError cacheResetPeakStats(int32_t device) {
  DeviceCache* cache = nullptr;
  if (aclError rc = cacheFor(device, "cacheResetPeakStats", &cache)) return rc;
  cache->resetPeakStats();
  return ACL_SUCCESS;
}

aclError cacheResetAccumulatedStats(int32_t device) {
  DeviceCache* cache = nullptr;
  if (aclError rc = cacheFor(device, "cacheResetAccumulatedStats", &cache)) return rc;
  cache->resetAccumulatedStats();
  return ACL_SUCCESS;
}

aclError cacheSetMemoryFraction(double fraction, int32_t device) {
  if (!(fraction >= 0.0 && fraction <= 1.0)) {
    return fail(ACL_ERROR_INVALID_PARAM,
                "cacheSetMemoryFraction: fraction " + std::to_string(fraction) + " is outside [0, 1]");
  }
  DeviceCache* cache = nullptr;
  if (aclError rc = cacheFor(device, "cacheSetMemoryFraction", &cache)) return rc;
  cache->setMemoryFraction(fraction);
  return ACL_SUCCESS;
}

aclError cacheGetMemoryFraction(int32_t device, double* fraction) {
  if (fraction == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "cacheGetMemoryFraction: fraction is null");
  DeviceCache* cache = nullptr;
  if (aclError rc = cacheFor(device, "cacheGetMemoryFraction", &cache)) return rc;
  *fraction = cache->memoryFraction();
  return ACL_SUCCESS;
}

aclError cacheGetConfig(AllocatorConfig* config) {
  if (config == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "cacheGetConfig: config is null");
  AllocatorState& state = allocatorState();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (aclError rc = loadConfig(state)) return rc;
  *config = state.config;
  return ACL_SUCCESS;
}

aclError cacheSnapshot(MemorySnapshot* snapshot) {
  if (snapshot == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "cacheSnapshot: snapshot is null");
  uint32_t count = 0;
  if (aclError rc = visibleDeviceCount(&count)) return rc;
  snapshot->segments.clear();
  snapshot->device_traces.assign(count, {});
  for (DeviceCache* cache : existingCaches()) cache->snapshot(snapshot);
  return ACL_SUCCESS;
}

aclError cacheRecordHistory(int32_t enabled, size_t maxEntries, HistoryContextFn context) {
  if (enabled && maxEntries == 0) {
    return fail(ACL_ERROR_INVALID_PARAM, "cacheRecordHistory: maxEntries must be positive when enabling history");
  }
  AllocatorState& state = allocatorState();
  HistorySettings settings{enabled != 0, enabled ? maxEntries : 0};
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    state.history = settings;
    state.contextFn = enabled ? context : nullptr;
  }
  for (DeviceCache* cache : existingCaches()) cache->setHistory(settings);
  return ACL_SUCCESS;
}

}  // namespace npurt
