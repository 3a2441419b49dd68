#include "memory.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include "device.h"
#include "error.h"
#include "ipc.h"
#include "npurt/caching_allocator.h"

namespace npurt {
namespace {

// Device allocations are aligned like real HBM allocations (512 B, the L0 alignment).
constexpr size_t kDeviceAlignment = 512;

// What the host keeps free at any time: the simulator's allocations fail before it gets lower.
constexpr size_t kMaxHostReserve = size_t(2) << 30;

struct Registry {
  std::mutex mutex;
  std::map<uintptr_t, MemoryRange> ranges;  // by base address
  std::unordered_map<int32_t, size_t> usedBytes;
  size_t hostBytes = 0;  // device + pinned bytes, against hostMemoryLimit()
};

// Leaked on purpose: stream workers may free memory while static destructors run at exit.
Registry& registry() {
  static Registry* instance = new Registry();
  return *instance;
}

std::string hexAddress(const void* ptr) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%p", ptr);
  return buf;
}

std::string bytesText(size_t bytes) {
  char buf[48];
  double value = static_cast<double>(bytes);
  const char* unit = "bytes";
  for (const char* next : {"KiB", "MiB", "GiB", "TiB"}) {
    if (value < 1024) break;
    value /= 1024;
    unit = next;
  }
  std::snprintf(buf, sizeof(buf), unit[0] == 'b' ? "%.0f %s" : "%.2f %s", value, unit);
  return buf;
}

// Counts `bytes` against the host limit, or fails when the limit or the host's free
// memory cannot take them; `what` names the memory in the message.
aclError reserveHost(size_t bytes, const char* caller, const std::string& what) {
  uint32_t count = 0;
  if (aclError rc = visibleDeviceCount(&count)) return rc;  // the limit comes from the same table
  size_t reserve = std::min(kMaxHostReserve, hostPhysicalBytes() / 16);
  size_t available = hostAvailableBytes();
  if (available > 0 && bytes > (available > reserve ? available - reserve : 0)) {
    return fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
                std::string(caller) + ": the host could not provide " + bytesText(bytes) + " " + what + ": only " +
                    bytesText(available) + " of host memory is available and the simulator leaves " +
                    bytesText(reserve) + " of it to the host");
  }
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  size_t limit = hostMemoryLimit();
  if (bytes > limit - std::min(limit, reg.hostBytes)) {
    return fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
                std::string(caller) + ": the host could not provide " + bytesText(bytes) + " " + what +
                    ": the simulator may take " + bytesText(limit) + " of host memory (NPU_SIM_HOST_MEMORY) and " +
                    bytesText(reg.hostBytes) + " of it are in use");
  }
  reg.hostBytes += bytes;
  return ACL_SUCCESS;
}

void unreserveHost(size_t bytes) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  reg.hostBytes -= bytes;
}

aclError releaseRange(void* ptr, aclrtMemLocation expected, const char* caller) {
  Registry& reg = registry();
  std::unique_lock<std::mutex> lock(reg.mutex);
  auto it = reg.ranges.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == reg.ranges.end() || it->second.location != expected) {
    return fail(ACL_ERROR_INVALID_PARAM, std::string(caller) + ": " + hexAddress(ptr) + " was not returned by " +
                                             (expected == ACL_MEM_LOCATION_DEVICE ? "aclrtMalloc" : "aclrtMallocHost") +
                                             " (or was already freed)");
  }
  if (it->second.imported) {
    return fail(ACL_ERROR_INVALID_PARAM, std::string(caller) + ": " + hexAddress(ptr) +
                                             " was mapped from another process: release it with aclrtIpcMemClose");
  }
  MemoryRange range = it->second;
  reg.ranges.erase(it);
  reg.hostBytes -= range.size;
  if (expected == ACL_MEM_LOCATION_DEVICE) {
    reg.usedBytes[range.device] -= range.size;
    lock.unlock();  // the IPC tables lock after this registry, never before
    destroySharedSegment(SharedSegment{ptr, range.size, range.fd, range.serial});
  } else {
    std::free(ptr);
  }
  return ACL_SUCCESS;
}

}  // namespace

MemoryRange findMemoryRange(const void* ptr) {
  Registry& reg = registry();
  uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(reg.mutex);
  auto it = reg.ranges.upper_bound(address);
  if (it == reg.ranges.begin()) return MemoryRange{};
  --it;
  if (address >= it->second.base + it->second.size) return MemoryRange{};
  return it->second;
}

size_t hostMemoryUsed() {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  return reg.hostBytes;
}

size_t deviceMemoryUsed(int32_t device) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  auto it = reg.usedBytes.find(device);
  return it == reg.usedBytes.end() ? 0 : it->second;
}

void registerImportedRange(void* base, size_t size, int32_t device, uint64_t serial) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  uintptr_t address = reinterpret_cast<uintptr_t>(base);
  MemoryRange range{address, size, ACL_MEM_LOCATION_DEVICE, device};
  range.serial = serial;
  range.imported = true;
  reg.ranges[address] = range;
}

void unregisterImportedRange(void* base) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  reg.ranges.erase(reinterpret_cast<uintptr_t>(base));
}

aclError cacheRegisterExternal(void* ptr, size_t size, int32_t device) {
  if (ptr == nullptr || size == 0) return fail(ACL_ERROR_INVALID_PARAM, "cacheRegisterExternal: empty range");
  if (aclError rc = checkDevice(device, "cacheRegisterExternal")) return rc;
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  uintptr_t base = reinterpret_cast<uintptr_t>(ptr);
  reg.ranges[base] = MemoryRange{base, size, ACL_MEM_LOCATION_DEVICE, device};
  return ACL_SUCCESS;
}

aclError cacheUnregisterExternal(void* ptr) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  if (reg.ranges.erase(reinterpret_cast<uintptr_t>(ptr)) == 0) {
    return fail(ACL_ERROR_INVALID_PARAM, "cacheUnregisterExternal: " + hexAddress(ptr) + " is not registered");
  }
  return ACL_SUCCESS;
}

}  // namespace npurt

using npurt::fail;

extern "C" {

aclError aclrtMalloc(void** devPtr, size_t size, int32_t deviceId) {
  if (devPtr == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: devPtr is null");
  *devPtr = nullptr;
  if (size == 0) return fail(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: size is 0");
  if (aclError rc = npurt::checkDevice(deviceId, "aclrtMalloc")) return rc;
  size_t capacity = npurt::deviceCapacity();
  if (size > capacity) {
    return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMalloc: " + std::to_string(size) + " bytes exceed the " +
                                                    std::to_string(capacity) + "-byte capacity of device " +
                                                    std::to_string(deviceId));
  }
  size_t rounded = (size + npurt::kDeviceAlignment - 1) / npurt::kDeviceAlignment * npurt::kDeviceAlignment;
  npurt::Registry& reg = npurt::registry();
  {
    // Reserve before calling malloc so concurrent callers cannot overshoot the capacity.
    std::lock_guard<std::mutex> lock(reg.mutex);
    size_t& used = reg.usedBytes[deviceId];
    if (rounded > capacity - used) {
      return fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
                  "aclrtMalloc: device " + std::to_string(deviceId) + " has " + std::to_string(capacity - used) +
                      " of " + std::to_string(capacity) + " bytes free, " + std::to_string(rounded) + " requested");
    }
    used += rounded;
  }
  if (aclError rc = npurt::reserveHost(rounded, "aclrtMalloc", "backing device " + std::to_string(deviceId))) {
    std::lock_guard<std::mutex> lock(reg.mutex);
    reg.usedBytes[deviceId] -= rounded;
    return rc;
  }
  // A memfd segment, so other processes can map it (npurt/ipc.h); page aligned, zero filled.
  npurt::SharedSegment segment;
  aclError created = npurt::createSharedSegment(rounded, deviceId, &segment);
  std::lock_guard<std::mutex> lock(reg.mutex);
  if (created != ACL_SUCCESS) {
    reg.usedBytes[deviceId] -= rounded;
    reg.hostBytes -= rounded;
    return created;
  }
  uintptr_t base = reinterpret_cast<uintptr_t>(segment.base);
  npurt::MemoryRange range{base, rounded, ACL_MEM_LOCATION_DEVICE, deviceId};
  range.fd = segment.fd;
  range.serial = segment.serial;
  reg.ranges[base] = range;
  *devPtr = segment.base;
  return ACL_SUCCESS;
}

aclError aclrtFree(void* devPtr) {
  if (devPtr == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtFree: devPtr is null");
  return npurt::releaseRange(devPtr, ACL_MEM_LOCATION_DEVICE, "aclrtFree");
}

aclError aclrtMallocHost(void** hostPtr, size_t size) {
  if (hostPtr == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtMallocHost: hostPtr is null");
  *hostPtr = nullptr;
  if (size == 0) return fail(ACL_ERROR_INVALID_PARAM, "aclrtMallocHost: size is 0");
  if (size > SIZE_MAX - 64) {
    return fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
                "aclrtMallocHost: " + std::to_string(size) + " bytes cannot be allocated");
  }
  size_t rounded = (size + 63) / 64 * 64;
  if (aclError rc = npurt::reserveHost(rounded, "aclrtMallocHost", "of pinned memory")) return rc;
  void* ptr = std::aligned_alloc(64, rounded);
  if (ptr == nullptr) {
    npurt::unreserveHost(rounded);
    return fail(ACL_ERROR_RT_MEMORY_ALLOCATION,
                "aclrtMallocHost: the host could not provide " + std::to_string(size) + " bytes of pinned memory");
  }
  npurt::Registry& reg = npurt::registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  uintptr_t base = reinterpret_cast<uintptr_t>(ptr);
  reg.ranges[base] = npurt::MemoryRange{base, rounded, ACL_MEM_LOCATION_HOST_PINNED, -1};
  *hostPtr = ptr;
  return ACL_SUCCESS;
}

aclError aclrtFreeHost(void* hostPtr) {
  if (hostPtr == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtFreeHost: hostPtr is null");
  return npurt::releaseRange(hostPtr, ACL_MEM_LOCATION_HOST_PINNED, "aclrtFreeHost");
}

aclError aclrtPointerGetAttributes(const void* ptr, aclrtMemLocation* location, int32_t* deviceId) {
  if (location == nullptr || deviceId == nullptr) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtPointerGetAttributes: location and deviceId must not be null");
  }
  npurt::MemoryRange range = npurt::findMemoryRange(ptr);
  *location = range.location;
  *deviceId = range.device;
  return ACL_SUCCESS;
}

aclError aclrtGetHostMemInfo(size_t* usedBytes, size_t* limitBytes) {
  if (usedBytes == nullptr || limitBytes == nullptr) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetHostMemInfo: usedBytes and limitBytes must not be null");
  }
  uint32_t count = 0;
  if (aclError rc = npurt::visibleDeviceCount(&count)) return rc;
  *usedBytes = npurt::hostMemoryUsed();
  *limitBytes = npurt::hostMemoryLimit();
  return ACL_SUCCESS;
}

aclError aclrtGetMemInfo(int32_t deviceId, size_t* freeBytes, size_t* totalBytes) {
  if (freeBytes == nullptr || totalBytes == nullptr) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo: freeBytes and totalBytes must not be null");
  }
  if (aclError rc = npurt::checkDevice(deviceId, "aclrtGetMemInfo")) return rc;
  *totalBytes = npurt::deviceCapacity();
  *freeBytes = *totalBytes - npurt::deviceMemoryUsed(deviceId);
  return ACL_SUCCESS;
}

}  // extern "C"
