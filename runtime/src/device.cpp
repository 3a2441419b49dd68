#include "device.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <deque>
#include <mutex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "error.h"
#include "npurt/device_control.h"
#include "stream.h"

namespace npurt {
namespace {

constexpr uint32_t kDefaultDeviceCount = 8;
// The 910B1's HBM; by default a device never claims more than the host can back.
constexpr size_t kHbmBytes = size_t(64) << 30;
constexpr size_t kMinHostLimit = size_t(256) << 20;

struct DeviceTable {
  std::vector<int32_t> physicalIds;  // logical id -> physical id
  size_t capacity = 0;
  size_t hostLimit = 0;
  std::string error;  // non-empty: the environment is malformed
};

// One /proc/meminfo field in bytes (0 if absent).
size_t meminfoBytes(const char* field) {
  FILE* file = std::fopen("/proc/meminfo", "r");
  if (file == nullptr) return 0;
  char line[256];
  size_t bytes = 0;
  size_t length = std::strlen(field);
  while (std::fgets(line, sizeof(line), file) != nullptr) {
    if (std::strncmp(line, field, length) == 0 && line[length] == ':') {
      bytes = static_cast<size_t>(std::strtoull(line + length + 1, nullptr, 10)) << 10;  // kB
      break;
    }
  }
  std::fclose(file);
  return bytes;
}

bool parseUnsigned(const char* text, unsigned long long* value, const char** rest) {
  errno = 0;
  char* end = nullptr;
  if (*text < '0' || *text > '9') return false;
  *value = std::strtoull(text, &end, 10);
  *rest = end;
  return errno == 0;
}

// "64G", "512M", "1048576": suffixes K/M/G/T, case-insensitive, optional trailing B.
bool parseBytes(const char* text, size_t* bytes) {
  unsigned long long value = 0;
  const char* rest = nullptr;
  if (!parseUnsigned(text, &value, &rest)) return false;
  int shift = 0;
  switch (*rest) {
    case 'k': case 'K': shift = 10; ++rest; break;
    case 'm': case 'M': shift = 20; ++rest; break;
    case 'g': case 'G': shift = 30; ++rest; break;
    case 't': case 'T': shift = 40; ++rest; break;
    default: break;
  }
  if (*rest == 'b' || *rest == 'B') ++rest;
  if (*rest != '\0' || value == 0) return false;
  if (shift > 0 && value > (~0ull >> shift)) return false;
  *bytes = static_cast<size_t>(value << shift);
  return true;
}

DeviceTable readEnvironment() {
  DeviceTable table;
  uint32_t physicalCount = kDefaultDeviceCount;
  if (const char* text = std::getenv("NPU_SIM_DEVICE_COUNT")) {
    unsigned long long value = 0;
    const char* rest = nullptr;
    if (!parseUnsigned(text, &value, &rest) || *rest != '\0' || value > 1024) {
      table.error = std::string("NPU_SIM_DEVICE_COUNT='") + text +
                    "' is not a device count: set it to an integer in [0, 1024] (default 8)";
      return table;
    }
    physicalCount = static_cast<uint32_t>(value);
  }
  if (const char* text = std::getenv("NPU_SIM_HOST_MEMORY")) {
    if (!parseBytes(text, &table.hostLimit)) {
      table.error = std::string("NPU_SIM_HOST_MEMORY='") + text +
                    "' is not a size: use a positive byte count with an optional K/M/G/T suffix, e.g. 8G";
      return table;
    }
  } else {
    // Three quarters of the machine, and no more than 90% of what is free right now:
    // device memory is host memory, and the kernel's OOM killer must never be the one to say no.
    size_t physical = hostPhysicalBytes();
    size_t available = hostAvailableBytes();
    table.hostLimit = std::max(kMinHostLimit, std::min(physical / 4 * 3, available / 10 * 9));
  }
  table.capacity = std::min(kHbmBytes, table.hostLimit);
  if (const char* text = std::getenv("NPU_SIM_DEVICE_MEMORY")) {
    if (!parseBytes(text, &table.capacity)) {
      table.error = std::string("NPU_SIM_DEVICE_MEMORY='") + text +
                    "' is not a size: use a positive byte count with an optional K/M/G/T suffix, e.g. 16G";
      return table;
    }
  }
  const char* visible = std::getenv("ASCEND_RT_VISIBLE_DEVICES");
  if (visible == nullptr) {
    for (uint32_t i = 0; i < physicalCount; ++i) table.physicalIds.push_back(static_cast<int32_t>(i));
    return table;
  }
  // As on real machines: a comma list of physical ids, logical ids follow its order.
  const char* cursor = visible;
  while (*cursor != '\0') {
    unsigned long long id = 0;
    const char* rest = nullptr;
    bool ok = parseUnsigned(cursor, &id, &rest) && (*rest == ',' || *rest == '\0') && id < physicalCount;
    for (int32_t seen : table.physicalIds) ok = ok && seen != static_cast<int32_t>(id);
    if (!ok) {
      table.error = std::string("ASCEND_RT_VISIBLE_DEVICES='") + visible +
                    "' must list distinct physical device ids below " + std::to_string(physicalCount) +
                    ", separated by commas (e.g. 0,2)";
      table.physicalIds.clear();
      return table;
    }
    table.physicalIds.push_back(static_cast<int32_t>(id));
    cursor = *rest == ',' ? rest + 1 : rest;
  }
  return table;
}

const DeviceTable& deviceTable() {
  static const DeviceTable table = readEnvironment();
  return table;
}

thread_local int32_t currentDeviceId = 0;

}  // namespace

size_t hostPhysicalBytes() {
  size_t bytes = meminfoBytes("MemTotal");
  if (bytes == 0) bytes = static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return bytes;
}

size_t hostAvailableBytes() {
  size_t bytes = meminfoBytes("MemAvailable");
  if (bytes == 0) bytes = static_cast<size_t>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return bytes;
}

aclError checkDevice(int32_t device, const char* caller) {
  const DeviceTable& table = deviceTable();
  if (!table.error.empty()) return fail(ACL_ERROR_INVALID_PARAM, table.error);
  if (device < 0 || static_cast<size_t>(device) >= table.physicalIds.size()) {
    return fail(ACL_ERROR_RT_INVALID_DEVICEID,
                std::string(caller) + ": device " + std::to_string(device) + " is out of range: " +
                    std::to_string(table.physicalIds.size()) +
                    " device(s) visible (NPU_SIM_DEVICE_COUNT, ASCEND_RT_VISIBLE_DEVICES)");
  }
  return ACL_SUCCESS;
}

aclError visibleDeviceCount(uint32_t* count) {
  const DeviceTable& table = deviceTable();
  if (!table.error.empty()) return fail(ACL_ERROR_INVALID_PARAM, table.error);
  *count = static_cast<uint32_t>(table.physicalIds.size());
  return ACL_SUCCESS;
}

size_t deviceCapacity() { return deviceTable().capacity; }

size_t hostMemoryLimit() { return deviceTable().hostLimit; }

int32_t currentDevice() { return currentDeviceId; }

namespace {

// Enough for any NPU_SIM_DEVICE_COUNT a host can run; checkDevice bounds the ids first.
constexpr int32_t kMaxDevices = 64;
constexpr int64_t kUtilizationWindowNs = int64_t(NPURT_UTILIZATION_WINDOW_MS) * 1000000;

std::atomic<bool> stoppedDevices[kMaxDevices];
std::atomic<uint32_t> opTimeoutMs{0};
// Busy intervals cost a lock and a clock read per task, so they are logged only once
// someone asked for utilization (its first answer covers the time since).
std::atomic<bool> utilizationTracked{false};

// When a device's streams were running something: closed intervals within the window,
// and the start of the open one while `running` streams are busy.
struct BusyLog {
  std::mutex mutex;
  int32_t running = 0;
  int64_t openSince = 0;
  std::deque<std::pair<int64_t, int64_t>> closed;
};

BusyLog& busyLog(int32_t device) {
  static BusyLog* logs = new BusyLog[kMaxDevices];  // leaked: workers outlive static destruction
  return logs[device < 0 || device >= kMaxDevices ? 0 : device];
}

void forgetBefore(BusyLog& log, int64_t since) {
  while (!log.closed.empty() && log.closed.front().second < since) log.closed.pop_front();
}

}  // namespace

bool deviceStopped(int32_t device) {
  return device >= 0 && device < kMaxDevices && stoppedDevices[device].load(std::memory_order_relaxed);
}

aclError stoppedDeviceError(int32_t device, const char* caller) {
  return fail(ACL_ERROR_RT_DEVICE_TASK_ABORT,
              std::string(caller) + ": device " + std::to_string(device) +
                  " was stopped (stop_device): its queued work was dropped and no new work runs on it until "
                  "restart_device(" + std::to_string(device) + ")");
}

int64_t steadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t kernelDeadlineNs() {
  uint32_t ms = opTimeoutMs.load(std::memory_order_relaxed);
  return ms == 0 ? 0 : steadyNowNs() + int64_t(ms) * 1000000;
}

void noteTaskStarted(int32_t device) {
  if (!utilizationTracked.load(std::memory_order_relaxed)) return;
  BusyLog& log = busyLog(device);
  std::lock_guard<std::mutex> lock(log.mutex);
  if (log.running++ == 0) log.openSince = steadyNowNs();
}

void noteTaskFinished(int32_t device) {
  if (!utilizationTracked.load(std::memory_order_relaxed)) return;
  BusyLog& log = busyLog(device);
  std::lock_guard<std::mutex> lock(log.mutex);
  if (log.running == 0) return;  // started before tracking began
  if (--log.running > 0) return;
  int64_t now = steadyNowNs();
  if (!log.closed.empty() && log.closed.back().second >= log.openSince) {
    log.closed.back().second = now;  // back-to-back tasks: one interval
  } else {
    log.closed.emplace_back(log.openSince, now);
  }
  forgetBefore(log, now - kUtilizationWindowNs);
}

}  // namespace npurt

using npurt::fail;

extern "C" {

aclError aclrtGetDeviceCount(uint32_t* count) {
  if (count == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount: count is null");
  return npurt::visibleDeviceCount(count);
}

aclError aclrtSetDevice(int32_t deviceId) {
  if (aclError rc = npurt::checkDevice(deviceId, "aclrtSetDevice")) return rc;
  npurt::currentDeviceId = deviceId;
  return ACL_SUCCESS;
}

aclError aclrtGetDevice(int32_t* deviceId) {
  if (deviceId == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice: deviceId is null");
  if (aclError rc = npurt::checkDevice(npurt::currentDeviceId, "aclrtGetDevice")) return rc;
  *deviceId = npurt::currentDeviceId;
  return ACL_SUCCESS;
}

aclError aclrtGetDeviceProperties(int32_t deviceId, aclrtDeviceProp* prop) {
  if (prop == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceProperties: prop is null");
  if (aclError rc = npurt::checkDevice(deviceId, "aclrtGetDeviceProperties")) return rc;
  // Ascend 910B1 (DESIGN.md section 3).
  std::memset(prop, 0, sizeof(*prop));
  std::strncpy(prop->name, "Ascend910B1", sizeof(prop->name) - 1);
  prop->totalGlobalMem = npurt::deviceCapacity();
  prop->cubeCoreNum = 24;
  prop->vectorCoreNum = 48;
  prop->l2CacheSize = size_t(192) << 20;
  prop->l1Size = size_t(512) << 10;
  prop->l0aSize = size_t(64) << 10;
  prop->l0bSize = size_t(64) << 10;
  prop->l0cSize = size_t(128) << 10;
  prop->ubSize = size_t(192) << 10;
  prop->cubeFreqGHz = 1.85;
  return ACL_SUCCESS;
}

aclError aclrtSynchronizeDevice(void) {
  int32_t device = npurt::currentDeviceId;
  if (aclError rc = npurt::checkDevice(device, "aclrtSynchronizeDevice")) return rc;
  return npurt::synchronizeDeviceStreams(device);
}

aclError npurtDeviceStop(int32_t deviceId) {
  if (aclError rc = npurt::checkDevice(deviceId, "npurtDeviceStop")) return rc;
  if (deviceId >= npurt::kMaxDevices) return fail(ACL_ERROR_RT_INVALID_DEVICEID, "npurtDeviceStop: device id too large");
  npurt::stoppedDevices[deviceId].store(true);
  return ACL_SUCCESS;
}

aclError npurtDeviceRestart(int32_t deviceId) {
  if (aclError rc = npurt::checkDevice(deviceId, "npurtDeviceRestart")) return rc;
  if (deviceId >= npurt::kMaxDevices) {
    return fail(ACL_ERROR_RT_INVALID_DEVICEID, "npurtDeviceRestart: device id too large");
  }
  // Drained while still stopped, so the errors taken here are the dropped tasks' only.
  (void)npurt::synchronizeDeviceStreams(deviceId);
  npurt::stoppedDevices[deviceId].store(false);
  return ACL_SUCCESS;
}

int32_t npurtDeviceStopped(int32_t deviceId) { return npurt::deviceStopped(deviceId) ? 1 : 0; }

aclError aclrtSetOpExecuteTimeOutWithMs(uint32_t timeoutMs) {
  npurt::opTimeoutMs.store(timeoutMs);
  return ACL_SUCCESS;
}

uint32_t npurtOpExecuteTimeoutMs(void) { return npurt::opTimeoutMs.load(); }

aclError npurtDeviceUtilization(int32_t deviceId, int32_t* percent) {
  if (percent == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "npurtDeviceUtilization: percent is null");
  if (aclError rc = npurt::checkDevice(deviceId, "npurtDeviceUtilization")) return rc;
  npurt::utilizationTracked.store(true);
  npurt::BusyLog& log = npurt::busyLog(deviceId);
  std::lock_guard<std::mutex> lock(log.mutex);
  int64_t now = npurt::steadyNowNs();
  int64_t since = now - npurt::kUtilizationWindowNs;
  npurt::forgetBefore(log, since);
  int64_t busy = 0;
  for (const auto& [start, end] : log.closed) busy += end - std::max(start, since);
  if (log.running > 0) busy += now - std::max(log.openSince, since);
  *percent = static_cast<int32_t>(std::min<int64_t>(100, busy * 100 / npurt::kUtilizationWindowNs));
  return ACL_SUCCESS;
}

}  // extern "C"
