#include "torch_npu/csrc/npu/OverflowCheck.h"

#include <ATen/ops/isfinite.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <pybind11/pybind11.h>

#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/PyBindRegistry.h"
#include "torch_npu/csrc/aten/CpuAlias.h"
#include "torch_npu/csrc/core/NpuAllocator.h"
#include "torch_npu/csrc/core/NpuDevice.h"
#include "torch_npu/csrc/core/NpuStream.h"

namespace torch_npu {

std::atomic<bool> overflowCheckOn{false};

namespace {

constexpr int kMaxDevices = 64;
std::atomic<bool> overflowed[kMaxDevices];

std::atomic<bool>& flagOf(c10::DeviceIndex device) {
  c10::DeviceIndex index = resolveDevice(device);
  TORCH_CHECK(index >= 0 && index < kMaxDevices, "device index ", static_cast<int>(index), " out of range\n",
              ptaErr(ErrCode::VALUE));
  return overflowed[index];
}

}  // namespace

void checkResultsForOverflow(const std::vector<at::Tensor>& results, c10::Stream stream) {
  std::vector<at::Tensor> aliases;
  for (const at::Tensor& t : results) {
    if (!t.defined() || !at::isFloatingType(t.scalar_type()) || t.numel() == 0) continue;
    // The scan may run after the caller dropped the result: keep its block from reuse till then.
    npuAllocator()->recordStream(t.storage().data_ptr(), stream);
    aliases.push_back(cpuAlias(t));
  }
  if (aliases.empty()) return;
  launchHostTask(stream, [aliases, device = stream.device_index()] {
    for (const at::Tensor& alias : aliases) {
      if (!at::isfinite(alias).all().item<bool>()) {
        overflowed[device].store(true);
        return;
      }
    }
  });
}

namespace {

void synchronizeAll(c10::DeviceIndex device) {
  c10::impl::getDeviceGuardImpl(c10::DeviceType::PrivateUse1)->synchronizeDevice(resolveDevice(device));
}

TORCH_NPU_BINDINGS(bindOverflowCheck) {
  m.def("_npu_set_overflow_check", [](bool on) { overflowCheckOn.store(on); });
  m.def("_npu_overflow_check_enabled", [] { return overflowCheckArmed(); });
  // The flag as the device's streams have left it so far: reading (or clearing) waits for them.
  m.def("_npu_get_overflow_flag", [](int device) {
    pybind11::gil_scoped_release noGil;
    synchronizeAll(static_cast<c10::DeviceIndex>(device));
    return flagOf(static_cast<c10::DeviceIndex>(device)).load();
  });
  m.def("_npu_clear_overflow_flag", [](int device) {
    pybind11::gil_scoped_release noGil;
    synchronizeAll(static_cast<c10::DeviceIndex>(device));
    flagOf(static_cast<c10::DeviceIndex>(device)).store(false);
  });
}

}  // namespace
}  // namespace torch_npu
