#include "torch_npu/csrc/core/NpuDevice.h"

#include <pthread.h>

#include <array>
#include <atomic>

#include "npurt/acl_rt.h"
#include "torch_npu/csrc/NpuError.h"

namespace torch_npu {
namespace {

constexpr int kMaxDevices = 64;
std::array<std::atomic<bool>, kMaxDevices> initialized{};
std::atomic<bool> anyInitialized{false};
std::atomic<bool> forkedChild{false};
thread_local c10::DeviceIndex threadDevice = 0;

void onForkChild() {
  if (anyInitialized.load()) forkedChild.store(true);
}

const bool forkHandlerInstalled = [] {
  pthread_atfork(nullptr, nullptr, &onForkChild);
  return true;
}();

}  // namespace

c10::DeviceIndex deviceCount() noexcept {
  static const c10::DeviceIndex count = [] {
    uint32_t n = 0;
    if (aclrtGetDeviceCount(&n) != ACL_SUCCESS) return c10::DeviceIndex{0};
    return static_cast<c10::DeviceIndex>(std::min<uint32_t>(n, kMaxDevices));
  }();
  return count;
}

void checkDeviceIndex(c10::DeviceIndex index) {
  TORCH_CHECK_INDEX(index >= 0 && index < deviceCount(), "Invalid NPU device index ", static_cast<int>(index),
                    ": ", static_cast<int>(deviceCount()),
                    " devices are visible, valid indices are 0..", deviceCount() - 1,
                    " (NPU_SIM_DEVICE_COUNT and ASCEND_RT_VISIBLE_DEVICES set what is visible).\n",
                    ptaErr(ErrCode::PARAM));
}

c10::DeviceIndex resolveDevice(c10::DeviceIndex index) {
  if (index == -1) return currentDevice();
  checkDeviceIndex(index);
  return index;
}

c10::DeviceIndex currentDevice() { return threadDevice; }

void setCurrentDevice(c10::DeviceIndex index) {
  checkDeviceIndex(index);
  checkNotForkedChild();
  if (index != threadDevice) {
    NPU_CHECK_ACL(aclrtSetDevice(index));
    threadDevice = index;
  }
  markInitialized(index);
}

void markInitialized(c10::DeviceIndex index) {
  if (index < 0 || index >= kMaxDevices || initialized[index].load(std::memory_order_relaxed)) return;
  initialized[index].store(true);
  anyInitialized.store(true);
}

bool hasPrimaryContext(c10::DeviceIndex index) {
  return index >= 0 && index < kMaxDevices && initialized[index].load();
}

bool isForkedChild() { return forkedChild.load(); }

void checkNotForkedChild() {
  TORCH_CHECK(!forkedChild.load(),
              "Cannot re-initialize NPU in forked subprocess. To use NPU with multiprocessing, you must use "
              "the 'spawn' start method (multiprocessing.set_start_method('spawn')).\n",
              ptaErr(ErrCode::UNAVAIL));
}

}  // namespace torch_npu
