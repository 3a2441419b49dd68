// A device cache's private pools (torch's graph pools and MemPool): their uses and routing.
#include <algorithm>

#include "device_cache.h"
#include "error.h"

namespace npurt {
namespace {

std::string poolName(MempoolId id) {
  return "(" + std::to_string(id.first) + ", " + std::to_string(id.second) + ")";
}

}  // namespace

PrivatePool* DeviceCache::findPool(MempoolId id) {
  auto it = privatePools_.find(PoolKey{id.first, id.second});
  return it == privatePools_.end() ? nullptr : it->second.get();
}

aclError DeviceCache::retainPool(MempoolId id) {
  if (id.first == 0 && id.second == 0) {
    return fail(ACL_ERROR_INVALID_PARAM, "cacheRetainPool: (0, 0) names the default pools, not a private pool");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto& pool = privatePools_[PoolKey{id.first, id.second}];
  if (!pool) {
    pool = std::make_unique<PrivatePool>();
    pool->id = id;
  }
  ++pool->useCount;
  return ACL_SUCCESS;
}

aclError DeviceCache::releasePool(MempoolId id) {
  std::lock_guard<std::mutex> lock(mutex_);
  PrivatePool* pool = findPool(id);
  if (pool == nullptr || pool->useCount == 0) {
    return fail(ACL_ERROR_INVALID_PARAM, "cacheReleasePool: memory pool " + poolName(id) + " of device " +
                                             std::to_string(device_) + " has no uses to release");
  }
  // Its free segments stay cached until the next empty cache, as torch keeps a freeable pool's.
  if (--pool->useCount == 0 && pool->segments == 0) privatePools_.erase(PoolKey{id.first, id.second});
  return ACL_SUCCESS;
}

aclError DeviceCache::poolUseCount(MempoolId id, int32_t* count) {
  std::lock_guard<std::mutex> lock(mutex_);
  PrivatePool* pool = findPool(id);
  *count = pool == nullptr ? 0 : pool->useCount;
  return ACL_SUCCESS;
}

aclError DeviceCache::beginAllocateToPool(MempoolId id, aclrtStream stream) {
  if (aclError rc = retainPool(id)) return rc;
  std::lock_guard<std::mutex> lock(mutex_);
  PoolKey key{id.first, id.second};
  for (const AllocRule& rule : allocRules_) {
    if (rule.pool == key) {
      --privatePools_.at(key)->useCount;
      return fail(ACL_ERROR_INVALID_PARAM, "cacheBeginAllocateToPool: allocations already go to memory pool " +
                                               poolName(id) + " (a capture or use_mem_pool is using it)");
    }
  }
  allocRules_.push_back(AllocRule{key, stream, std::this_thread::get_id()});
  return ACL_SUCCESS;
}

aclError DeviceCache::endAllocateToPool(MempoolId id) {
  std::lock_guard<std::mutex> lock(mutex_);
  PoolKey key{id.first, id.second};
  auto it = std::find_if(allocRules_.begin(), allocRules_.end(), [&](const AllocRule& rule) { return rule.pool == key; });
  if (it == allocRules_.end()) {
    return fail(ACL_ERROR_INVALID_PARAM,
                "cacheEndAllocateToPool: allocations do not go to memory pool " + poolName(id));
  }
  allocRules_.erase(it);
  return ACL_SUCCESS;
}

aclError DeviceCache::emptyPool(MempoolId id) {
  std::lock_guard<std::mutex> lock(mutex_);
  PrivatePool* pool = findPool(id);
  if (pool == nullptr || pool->useCount > 0) return ACL_SUCCESS;
  std::vector<Block*> unused;
  for (Pool* free : {&pool->small, &pool->large}) {
    for (Block* block : *free) {
      if (!block->isSplit()) unused.push_back(block);
    }
  }
  for (Block* block : unused) releaseSegment(block);  // the last one may take the pool with it
  return ACL_SUCCESS;
}

}  // namespace npurt
