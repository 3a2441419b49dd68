#include "memory.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include "device.h"
#include "error.h"

namespace npurt {
namespace {

// Device allocations are aligned like real HBM allocations (512 B, the L0 alignment).
constexpr size_t kDeviceAlignment = 512;

struct Registry {
  std::mutex mutex;
  std::map<uintptr_t, MemoryRange> ranges;  // by base address
  std::unordered_map<int32_t, size_t> usedBytes;
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

aclError releaseRange(void* ptr, aclrtMemLocation expected, const char* caller) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  auto it = reg.ranges.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == reg.ranges.end() || it->second.location != expected) {
    return fail(ACL_ERROR_INVALID_PARAM, std::string(caller) + ": " + hexAddress(ptr) + " was not returned by " +
                                             (expected == ACL_MEM_LOCATION_DEVICE ? "aclrtMalloc" : "aclrtMallocHost") +
                                             " (or was already freed)");
  }
  if (expected == ACL_MEM_LOCATION_DEVICE) reg.usedBytes[it->second.device] -= it->second.size;
  reg.ranges.erase(it);
  std::free(ptr);
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

size_t deviceMemoryUsed(int32_t device) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  auto it = reg.usedBytes.find(device);
  return it == reg.usedBytes.end() ? 0 : it->second;
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
  void* ptr = std::aligned_alloc(npurt::kDeviceAlignment, rounded);
  std::lock_guard<std::mutex> lock(reg.mutex);
  if (ptr == nullptr) {
    reg.usedBytes[deviceId] -= rounded;
    return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMalloc: the host could not provide " + std::to_string(rounded) +
                                                    " bytes backing device " + std::to_string(deviceId) +
                                                    " (lower NPU_SIM_DEVICE_MEMORY or free host memory)");
  }
  uintptr_t base = reinterpret_cast<uintptr_t>(ptr);
  reg.ranges[base] = npurt::MemoryRange{base, rounded, ACL_MEM_LOCATION_DEVICE, deviceId};
  *devPtr = ptr;
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
  void* ptr = std::aligned_alloc(64, rounded);
  if (ptr == nullptr) {
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
