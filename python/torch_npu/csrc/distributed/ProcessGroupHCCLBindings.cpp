// Python face of ProcessGroupHCCL: torch_npu._C._distributed.ProcessGroupHCCL.
//
// The class derives from torch's own c10d Backend binding (the extension shares
// torch's pybind11 registry), so c10d accepts it as a backend object.
#include <pybind11/chrono.h>
#include <torch/csrc/utils/pybind.h>

#include "torch_npu/csrc/PyBindRegistry.h"
#include "torch_npu/csrc/distributed/ProcessGroupHCCL.h"

namespace py = pybind11;

namespace torch_npu::distributed {

TORCH_NPU_BINDINGS(bindProcessGroupHCCL) {
  py::module_::import("torch.distributed");  // registers c10d's Backend type before we derive from it
  auto dist = m.def_submodule("_distributed", "the hccl process-group backend");
  py::class_<ProcessGroupHCCL, c10d::Backend, c10::intrusive_ptr<ProcessGroupHCCL>>(dist, "ProcessGroupHCCL")
      .def(py::init([](const c10::intrusive_ptr<c10d::Backend>& transport, int rank, int size,
                       c10::DeviceIndex device, std::chrono::milliseconds timeout) {
             return c10::make_intrusive<ProcessGroupHCCL>(transport, rank, size, device, timeout);
           }),
           py::arg("transport"), py::arg("rank"), py::arg("size"), py::arg("device"), py::arg("timeout"))
      .def_property_readonly("device", &ProcessGroupHCCL::device)
      .def_property_readonly("timeout", &ProcessGroupHCCL::timeout)
      .def("_set_transport", &ProcessGroupHCCL::setTransport, py::arg("transport"),
           py::call_guard<py::gil_scoped_release>());
}

}  // namespace torch_npu::distributed
