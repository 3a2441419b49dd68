// torch's legacy device-timing hooks for PrivateUse1 (registerPrivateUse1Methods):
// torch.autograd.profiler.profile(use_device="npu") without Kineto times each op on the
// device by recording a timing event on the current stream at its start and end.
#include <c10/util/ApproximateClock.h>
#include <torch/csrc/profiler/stubs/base.h>

#include "npurt/acl_rt.h"
#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/core/NpuDevice.h"
#include "torch_npu/csrc/core/NpuStream.h"

namespace torch_npu::profiler {
namespace {

using torch::profiler::impl::ProfilerVoidEventStub;

struct NpuProfilerStubs final : public torch::profiler::impl::ProfilerStubs {
  void record(c10::DeviceIndex* device, ProfilerVoidEventStub* event, int64_t* cpu_ns) const override {
    c10::DeviceIndex current = currentDevice();
    if (device != nullptr) *device = current;
    aclrtEvent handle = nullptr;
    NPU_CHECK_ACL(aclrtCreateEventWithFlag(&handle, ACL_EVENT_TIME_LINE));
    *event = std::shared_ptr<void>(handle, [](void* e) { (void)aclrtDestroyEvent(static_cast<aclrtEvent>(e)); });
    if (cpu_ns != nullptr) *cpu_ns = c10::getTime();
    NPU_CHECK_ACL(aclrtRecordEvent(handle, nativeStream(getCurrentStream(current))));
  }

  // Microseconds between two recorded events (torch's unit for these stubs).
  float elapsed(const ProfilerVoidEventStub* start, const ProfilerVoidEventStub* end) const override {
    auto first = static_cast<aclrtEvent>(start->get());
    auto second = static_cast<aclrtEvent>(end->get());
    NPU_CHECK_ACL(aclrtSynchronizeEvent(first));
    NPU_CHECK_ACL(aclrtSynchronizeEvent(second));
    float ms = 0;
    NPU_CHECK_ACL(aclrtEventElapsedTime(&ms, first, second));
    return ms * 1000.0f;
  }

  // No external tracer (NVTX's role) watches the simulated device: marks and ranges
  // have nowhere to go, and the op itself is already in the profile.
  void mark(const char* /*name*/) const override {}
  void rangePush(const char* /*name*/) const override {}
  void rangePop() const override {}

  bool enabled() const override { return true; }

  void onEachDevice(std::function<void(int)> op) const override {
    c10::DeviceIndex previous = currentDevice();
    for (c10::DeviceIndex d = 0; d < deviceCount(); ++d) {
      setCurrentDevice(d);
      op(d);
    }
    setCurrentDevice(previous);
  }

  void synchronize() const override { synchronizeDevice(currentDevice()); }
};

const struct Registration {
  Registration() {
    static NpuProfilerStubs stubs;
    torch::profiler::impl::registerPrivateUse1Methods(&stubs);
  }
} registration;

}  // namespace
}  // namespace torch_npu::profiler
