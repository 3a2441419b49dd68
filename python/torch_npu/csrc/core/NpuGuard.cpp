// The DeviceGuardImpl for PrivateUse1: device switching, streams and events for
// torch's generic machinery (DeviceGuard, StreamGuard, torch.Stream, torch.Event,
// torch.accelerator, autograd's cross-stream synchronisation).
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "npurt/acl_rt.h"
#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/core/NpuAllocator.h"
#include "torch_npu/csrc/core/NpuDevice.h"
#include "torch_npu/csrc/core/NpuStream.h"

namespace torch_npu {
namespace {

constexpr c10::DeviceType kNpu = c10::DeviceType::PrivateUse1;

aclrtEvent asEvent(void* event) { return static_cast<aclrtEvent>(event); }

struct NpuGuardImpl final : public c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kNpu; }

  c10::Device exchangeDevice(c10::Device device) const override {
    c10::Device previous = getDevice();
    if (device.index() != previous.index()) setDevice(device);
    return previous;
  }

  c10::Device getDevice() const override { return {kNpu, currentDevice()}; }

  void setDevice(c10::Device device) const override {
    TORCH_CHECK(device.type() == kNpu, "expected an NPU device, got ", device, "\n", ptaErr(ErrCode::PARAM));
    setCurrentDevice(device.index() == -1 ? currentDevice() : device.index());
  }

  void uncheckedSetDevice(c10::Device device) const noexcept override {
    try {
      setCurrentDevice(device.index());
    } catch (const std::exception&) {
      // Runs from guard destructors, which must not throw; the index was valid when saved.
    }
  }

  c10::Stream getStream(c10::Device device) const override { return getCurrentStream(device.index()); }

  c10::Stream getDefaultStream(c10::Device device) const override {
    return torch_npu::getDefaultStream(device.index());
  }

  c10::Stream getStreamFromGlobalPool(c10::Device device, bool isHighPriority) const override {
    return getStreamFromPool(device.index(), isHighPriority);
  }

  c10::Stream getNewStream(c10::Device device, int priority) const override {
    return getStreamFromPool(device.index(), priority < 0);
  }

  c10::Stream exchangeStream(c10::Stream stream) const override { return exchangeCurrentStream(stream); }

  void* getStreamNativeHandle(const c10::Stream stream) const override { return nativeStream(stream); }

  void destroyEvent(void* event, const c10::DeviceIndex /*device_index*/) const noexcept override {
    if (event != nullptr) (void)aclrtDestroyEvent(asEvent(event));
  }

  void record(void** event, const c10::Stream& stream, const c10::DeviceIndex deviceIndex,
              const c10::EventFlag flag) const override {
    TORCH_CHECK(deviceIndex == -1 || deviceIndex == stream.device_index(), "event of npu:", deviceIndex,
                " cannot be recorded on a stream of npu:", stream.device_index(), "\n", ptaErr(ErrCode::PARAM));
    if (*event == nullptr) {
      // torch.Event(enable_timing=True) asks for BACKEND_DEFAULT, as cudaEventDefault times.
      uint32_t aclFlag = flag == c10::EventFlag::BACKEND_DEFAULT ? ACL_EVENT_TIME_LINE : ACL_EVENT_SYNC;
      aclrtEvent created = nullptr;
      NPU_CHECK_ACL(aclrtCreateEventWithFlag(&created, aclFlag));
      *event = created;
    }
    NPU_CHECK_ACL(aclrtRecordEvent(asEvent(*event), nativeStream(stream)));
  }

  void block(void* event, const c10::Stream& stream) const override {
    if (event == nullptr) return;
    NPU_CHECK_ACL(aclrtStreamWaitEvent(nativeStream(stream), asEvent(event)));
  }

  bool queryEvent(void* event) const override {
    if (event == nullptr) return true;
    int32_t complete = 0;
    NPU_CHECK_ACL(aclrtQueryEventStatus(asEvent(event), &complete));
    return complete != 0;
  }

  c10::DeviceIndex deviceCount() const noexcept override { return torch_npu::deviceCount(); }

  bool queryStream(const c10::Stream& stream) const override { return torch_npu::queryStream(stream); }

  void synchronizeStream(const c10::Stream& stream) const override { torch_npu::synchronizeStream(stream); }

  void synchronizeEvent(void* event) const override {
    if (event == nullptr) return;
    NPU_CHECK_ACL(aclrtSynchronizeEvent(asEvent(event)));
  }

  void synchronizeDevice(const c10::DeviceIndex deviceIndex) const override {
    torch_npu::synchronizeDevice(deviceIndex);
  }

  void recordDataPtrOnStream(const c10::DataPtr& dataPtr, const c10::Stream& stream) const override {
    npuAllocator()->recordStream(dataPtr, stream);
  }

  double elapsedTime(void* start, void* end, const c10::DeviceIndex /*device_index*/) const override {
    TORCH_CHECK(start != nullptr && end != nullptr,
                "elapsed_time needs both events recorded first: call record() on each\n", ptaErr(ErrCode::VALUE));
    float ms = 0.0f;
    NPU_CHECK_ACL(aclrtEventElapsedTime(&ms, asEvent(start), asEvent(end)));
    return ms;
  }
};

}  // namespace

C10_REGISTER_GUARD_IMPL(PrivateUse1, NpuGuardImpl);

}  // namespace torch_npu
