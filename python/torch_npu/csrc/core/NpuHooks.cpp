// PrivateUse1 hooks: what torch asks a backend directly (availability, generators,
// pinned memory, pointer ownership, storage resize, primary contexts).
#include <ATen/detail/PrivateUse1HooksInterface.h>

#include "npurt/acl_rt.h"
#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/core/NpuAllocator.h"
#include "torch_npu/csrc/core/NpuDevice.h"
#include "torch_npu/csrc/core/NpuGenerator.h"

namespace torch_npu {
namespace {

struct NpuHooks final : public at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return torch_npu::deviceCount() > 0; }
  void init() const override { checkNotForkedChild(); }

  c10::DeviceIndex deviceCount() const override { return torch_npu::deviceCount(); }
  void setCurrentDevice(c10::DeviceIndex device) const override { torch_npu::setCurrentDevice(device); }
  c10::DeviceIndex getCurrentDevice() const override { return currentDevice(); }

  c10::DeviceIndex exchangeDevice(c10::DeviceIndex device) const override {
    c10::DeviceIndex previous = currentDevice();
    if (device != previous) torch_npu::setCurrentDevice(device);
    return previous;
  }

  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex device) const override { return exchangeDevice(device); }

  bool hasPrimaryContext(c10::DeviceIndex device) const override { return torch_npu::hasPrimaryContext(device); }

  const at::Generator& getDefaultGenerator(c10::DeviceIndex device) const override {
    return getDefaultNpuGenerator(device);
  }

  at::Generator getNewGenerator(c10::DeviceIndex device) const override { return createNpuGenerator(device); }

  c10::Device getDeviceFromPtr(void* data) const override {
    aclrtMemLocation location = ACL_MEM_LOCATION_UNREGISTERED;
    int32_t device = -1;
    NPU_CHECK_ACL(aclrtPointerGetAttributes(data, &location, &device));
    TORCH_CHECK(location == ACL_MEM_LOCATION_DEVICE, "pointer ", data, " is not NPU device memory\n",
                ptaErr(ErrCode::PTR));
    return {c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device)};
  }

  bool isPinnedPtr(const void* data) const override { return torch_npu::isPinnedPtr(data); }
  at::Allocator* getPinnedMemoryAllocator() const override { return pinnedAllocator(); }

  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    resizeStorageBytes(storage, newsize);
  }
};

const bool hooksRegistered = [] {
  at::RegisterPrivateUse1HooksInterface(new NpuHooks());
  return true;
}();

}  // namespace
}  // namespace torch_npu
