#include "torch_npu/csrc/core/NpuStream.h"

#include <array>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "npurt/acl_mdl.h"
#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/core/NpuDevice.h"

namespace torch_npu {
namespace {

constexpr c10::StreamId kLowPoolBase = 1;
constexpr c10::StreamId kHighPoolBase = 1 + ACL_STREAM_POOL_SIZE;

// Lazily sized to the device count: the thread's current stream index per device.
std::vector<c10::StreamId>& threadCurrentStreams() {
  thread_local std::vector<c10::StreamId> current(deviceCount(), 0);
  return current;
}

std::array<std::atomic<uint32_t>, 64> lowCounters{};
std::array<std::atomic<uint32_t>, 64> highCounters{};
std::atomic<int> syncDebugMode{0};

// Exceptions from host tasks: the runtime keeps only a status code, so the message waits here.
std::mutex hostTaskErrorMutex;
std::string hostTaskError;

c10::Stream makeStream(c10::DeviceIndex device, c10::StreamId id) {
  return c10::Stream(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::PrivateUse1, device), id);
}

int32_t runHostTask(void* userData) {
  auto* task = static_cast<std::function<void()>*>(userData);
  try {
    (*task)();
    return 0;
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(hostTaskErrorMutex);
    hostTaskError = e.what();
    return 1;
  }
}

void releaseHostTask(void* userData) { delete static_cast<std::function<void()>*>(userData); }

std::string takeHostTaskError() {
  std::lock_guard<std::mutex> lock(hostTaskErrorMutex);
  return std::exchange(hostTaskError, std::string());
}

void checkStreamStatus(aclError status, const char* call) {
  if (status == ACL_SUCCESS) return;
  std::string taskError = takeHostTaskError();
  TORCH_CHECK(false, call, " failed with ACL error ", status, ": ", aclGetRecentErrMsg(),
              taskError.empty() ? "" : "\nA task on the stream failed: ", taskError, "\n", ptaErr(ErrCode::ACL));
}

}  // namespace

aclrtStream nativeStream(c10::Stream stream) {
  TORCH_CHECK(stream.device_type() == c10::DeviceType::PrivateUse1, "expected an NPU stream, got a stream of ",
              stream.device(), "\n", ptaErr(ErrCode::PARAM));
  checkDeviceIndex(stream.device_index());
  aclrtStream handle = nullptr;
  NPU_CHECK_ACL(aclrtGetStreamByIndex(stream.device_index(), static_cast<uint32_t>(stream.id()), &handle));
  return handle;
}

c10::Stream getCurrentStream(c10::DeviceIndex device) {
  device = resolveDevice(device);
  return makeStream(device, threadCurrentStreams()[device]);
}

c10::Stream getDefaultStream(c10::DeviceIndex device) { return makeStream(resolveDevice(device), 0); }

c10::Stream getStreamFromPool(c10::DeviceIndex device, bool highPriority) {
  device = resolveDevice(device);
  auto& counter = highPriority ? highCounters[device] : lowCounters[device];
  c10::StreamId slot = counter.fetch_add(1) % ACL_STREAM_POOL_SIZE;
  return makeStream(device, (highPriority ? kHighPoolBase : kLowPoolBase) + slot);
}

c10::Stream exchangeCurrentStream(c10::Stream stream) {
  nativeStream(stream);  // validates device and index
  auto& current = threadCurrentStreams();
  c10::Stream previous = makeStream(stream.device_index(), current[stream.device_index()]);
  current[stream.device_index()] = stream.id();
  return previous;
}

int streamPriority(c10::Stream stream) { return stream.id() >= kHighPoolBase ? -1 : 0; }

void synchronizeStream(c10::Stream stream) {
  checkNotForkedChild();
  checkStreamStatus(aclrtSynchronizeStream(nativeStream(stream)), "aclrtSynchronizeStream");
}

void synchronizeDevice(c10::DeviceIndex device) {
  device = resolveDevice(device);
  checkNotForkedChild();
  // aclrtSynchronizeDevice acts on the runtime's current device of this thread.
  NPU_CHECK_ACL(aclrtSetDevice(device));
  aclError status = aclrtSynchronizeDevice();
  NPU_CHECK_ACL(aclrtSetDevice(currentDevice()));
  checkStreamStatus(status, "aclrtSynchronizeDevice");
}

bool queryStream(c10::Stream stream) {
  int32_t done = 0;
  NPU_CHECK_ACL(aclrtStreamQuery(nativeStream(stream), &done));
  return done != 0;
}

void launchHostTask(c10::Stream stream, std::function<void()> task) {
  checkNotForkedChild();
  aclrtStream handle = nativeStream(stream);
  // The runtime owns the task: it runs once, or at every replay when a graph captured it.
  auto* heapTask = new std::function<void()>(std::move(task));
  aclError status = npurtLaunchHostFuncOwned(handle, &runHostTask, heapTask, &releaseHostTask);
  checkStreamStatus(status, "npurtLaunchHostFuncOwned");
}

void setSyncDebugMode(int mode) {
  TORCH_CHECK(mode >= 0 && mode <= 2, "invalid sync debug mode ", mode,
              ": use 0 ('default'), 1 ('warn') or 2 ('error')\n", ptaErr(ErrCode::VALUE));
  syncDebugMode.store(mode);
}

int getSyncDebugMode() { return syncDebugMode.load(); }

void reportSynchronizingCall(const char* what) {
  int mode = syncDebugMode.load(std::memory_order_relaxed);
  if (mode == 1) {
    TORCH_WARN("called a synchronizing NPU operation: ", what);
  } else if (mode == 2) {
    TORCH_CHECK(false, "called a synchronizing NPU operation: ", what,
                " (torch.npu.set_sync_debug_mode('error') is set; use set_sync_debug_mode(0) to allow it)\n",
                ptaErr(ErrCode::NOT_SUPPORT));
  }
}

}  // namespace torch_npu
