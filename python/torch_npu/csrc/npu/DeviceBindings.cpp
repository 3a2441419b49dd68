// Python bindings for devices, synchronisation, generators and the fallback counters.
#include <pybind11/stl.h>
#include <torch/csrc/Generator.h>
#include <torch/csrc/utils/device_lazy_init.h>
#include <torch/csrc/utils/pybind.h>

#include <ATen/ops/from_blob.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <cstdio>

#include "npurt/acl_rt.h"
#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/PyBindRegistry.h"
#include "torch_npu/csrc/aten/CpuFallback.h"
#include "torch_npu/csrc/core/NpuDevice.h"
#include "torch_npu/csrc/core/NpuGenerator.h"
#include "torch_npu/csrc/core/NpuStream.h"

namespace torch_npu {
namespace {

namespace py = pybind11;

py::dict deviceProperties(c10::DeviceIndex device) {
  aclrtDeviceProp prop{};
  NPU_CHECK_ACL(aclrtGetDeviceProperties(resolveDevice(device), &prop));
  py::dict d;
  d["name"] = std::string(prop.name);
  d["total_memory"] = prop.totalGlobalMem;
  d["cube_core_num"] = prop.cubeCoreNum;
  d["vector_core_num"] = prop.vectorCoreNum;
  d["L2_cache_size"] = prop.l2CacheSize;
  d["l1_size"] = prop.l1Size;
  d["l0a_size"] = prop.l0aSize;
  d["l0b_size"] = prop.l0bSize;
  d["l0c_size"] = prop.l0cSize;
  d["ub_size"] = prop.ubSize;
  d["cube_freq_ghz"] = prop.cubeFreqGHz;
  // A stable per-device id in the 8-4-4-4-12 form torch.cuda's uuid prints as: the
  // simulated chip has no serial number, so it is derived from the logical index.
  char uuid[40];
  std::snprintf(uuid, sizeof(uuid), "4e505553-494d-0910-b100-%012x", static_cast<unsigned>(resolveDevice(device)));
  d["uuid"] = std::string(uuid);
  return d;
}

// torch_npu._C._weak_ref_tensor: a view of the same memory that does not own it (no
// storage reference), for callers that keep the owner alive themselves.
at::Tensor weakRefTensor(const at::Tensor& tensor) {
  if (!tensor.defined()) return tensor;
  return at::from_blob(tensor.data_ptr(), tensor.sizes(), tensor.strides(), [](void*) {}, tensor.options());
}

void synchronizeDevice(c10::DeviceIndex device) {
  auto* impl = c10::impl::getDeviceGuardImpl(c10::DeviceType::PrivateUse1);
  py::gil_scoped_release noGil;
  impl->synchronizeDevice(resolveDevice(device));
}

TORCH_NPU_BINDINGS(bindDevices) {
  m.def("_npu_device_count", [] { return static_cast<int>(deviceCount()); });
  m.def("_npu_get_device", [] { return static_cast<int>(currentDevice()); });
  m.def("_npu_set_device", [](int device) { setCurrentDevice(static_cast<c10::DeviceIndex>(device)); });
  m.def("_npu_check_device", [](int device) { checkDeviceIndex(static_cast<c10::DeviceIndex>(device)); });
  m.def("_npu_has_primary_context", [](int device) { return hasPrimaryContext(static_cast<c10::DeviceIndex>(device)); });
  m.def("_npu_get_device_properties", [](int device) { return deviceProperties(static_cast<c10::DeviceIndex>(device)); });
  m.def("_npu_synchronize", [](int device) { synchronizeDevice(static_cast<c10::DeviceIndex>(device)); });
  m.def("_npu_is_in_bad_fork", &isForkedChild);
  // After fork, torch must ask torch.npu._lazy_init again, which then raises.
  m.def("_npu_set_requires_device_init",
        [] { torch::utils::set_requires_device_init(c10::DeviceType::PrivateUse1, true); });
  m.def("_npu_set_sync_debug_mode", &setSyncDebugMode);
  m.def("_npu_get_sync_debug_mode", &getSyncDebugMode);
  m.def("_npu_default_generator", [](int device) {
    return py::reinterpret_steal<py::object>(
        THPGenerator_initDefaultGenerator(getDefaultNpuGenerator(static_cast<c10::DeviceIndex>(device))));
  });
  m.def("_weak_ref_tensor", &weakRefTensor, py::arg("tensor"));
  m.def("_fallback_counts", &fallbackCounts);
  m.def("_reset_fallback_counts", &resetFallbackCounts);
}

}  // namespace
}  // namespace torch_npu
