// Python bindings of NPU graphs and private memory pools; torch_npu.npu.graphs and
// torch_npu.npu.mem_pool build torch.cuda's API on them.
#include <pybind11/stl.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/Generator.h>
#include <torch/csrc/utils/pybind.h>

#include <optional>
#include <string>
#include <utility>

#include "npurt/caching_allocator.h"
#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/PyBindRegistry.h"
#include "torch_npu/csrc/core/NpuDevice.h"
#include "torch_npu/csrc/graph/NPUGraph.h"

namespace torch_npu {
namespace {

namespace py = pybind11;

using PoolId = std::pair<uint64_t, uint64_t>;

// Pool errors (an unknown pool, a pool already in use) are the caller's: ValueError.
void checkPool(aclError status, const char* what) {
  TORCH_CHECK_VALUE(status == ACL_SUCCESS, what, ": ", aclGetRecentErrMsg(), "\n",
                    errCode(SubModule::GRAPH, ErrCode::VALUE));
}

npurt::MempoolId runtimeId(const PoolId& id) { return {id.first, id.second}; }

// torch.npu.MemPool's C++ side: a user pool on the device current at creation, with one use
// of its own; dropping the object releases that use and frees the pool's cached segments.
class MemPool {
 public:
  MemPool() : device_(currentDevice()), id_(newUserPoolId()) {
    markInitialized(device_);
    checkPool(npurt::cacheRetainPool(device_, runtimeId(id_)), "MemPool");
  }
  ~MemPool() {
    (void)npurt::cacheReleasePool(device_, runtimeId(id_));
    (void)npurt::cacheEmptyPool(device_, runtimeId(id_));
  }
  MemPool(const MemPool&) = delete;
  MemPool& operator=(const MemPool&) = delete;

  PoolId id() const { return id_; }
  c10::DeviceIndex device() const { return device_; }
  int32_t useCount() const {
    int32_t count = 0;
    checkPool(npurt::cachePoolUseCount(device_, runtimeId(id_), &count), "MemPool.use_count");
    return count;
  }

 private:
  c10::DeviceIndex device_;
  PoolId id_;
};

at::Generator unwrapGenerator(const py::object& generator) {
  TORCH_CHECK_TYPE(THPGenerator_Check(generator.ptr()), "register_generator_state expects a torch.Generator, got ",
                   py::str(py::type::of(generator)).cast<std::string>(), "\n", errCode(SubModule::GRAPH, ErrCode::TYPE));
  at::Generator gen = reinterpret_cast<THPGenerator*>(generator.ptr())->cdata;
  TORCH_CHECK_VALUE(gen.device().type() == c10::DeviceType::PrivateUse1,
                    "register_generator_state expects an NPU generator, got one of ", gen.device(), "\n",
                    errCode(SubModule::GRAPH, ErrCode::VALUE));
  return gen;
}

TORCH_NPU_BINDINGS(bindGraphs) {
  py::class_<NPUGraph>(m, "_NPUGraph")
      .def(py::init([](bool keepGraph) {
             at::GraphImplArgs args;
             args.keep_graph = keepGraph;
             return std::make_unique<NPUGraph>(args);
           }),
           py::arg("keep_graph") = false)
      .def(
          "capture_begin",
          [](NPUGraph& graph, std::optional<PoolId> pool, const std::string& mode) {
            aclmdlRICaptureMode captureMode = captureModeFromName(mode);
            py::gil_scoped_release noGil;
            graph.captureBegin(pool.value_or(PoolId{0, 0}), captureMode);
          },
          py::arg("pool") = py::none(), py::arg("capture_error_mode") = "global")
      .def("capture_end",
           [](NPUGraph& graph) {
             torch::PyWarningHandler warnings;  // the empty-graph warning becomes a Python warning
             py::gil_scoped_release noGil;
             graph.capture_end();
           })
      .def("instantiate", &NPUGraph::instantiate)
      .def("replay", &NPUGraph::replay, py::call_guard<py::gil_scoped_release>())
      .def("reset", &NPUGraph::reset, py::call_guard<py::gil_scoped_release>())
      .def("pool", &NPUGraph::pool)
      .def("enable_debug_mode", &NPUGraph::enable_debug_mode)
      .def("debug_dump",
           [](NPUGraph& graph, const std::string& path) {
             torch::PyWarningHandler warnings;
             graph.debug_dump(path);
           })
      .def("register_generator_state",
           [](NPUGraph& graph, const py::object& generator) { graph.registerGeneratorState(unwrapGenerator(generator)); })
      .def("task_count", &NPUGraph::taskCount);

  m.def("_graph_pool_handle", &graphPoolHandle);
  m.def("_npu_isCurrentStreamCapturing", &isCurrentStreamCapturing);

  py::class_<MemPool>(m, "_MemPool")
      .def(py::init<>())
      .def_property_readonly("id", &MemPool::id)
      .def_property_readonly("device", &MemPool::device)
      .def("use_count", &MemPool::useCount);
  m.def("_npu_beginAllocateCurrentThreadToPool", [](int device, PoolId id) {
    checkPool(npurt::cacheBeginAllocateToPool(resolveDevice(static_cast<c10::DeviceIndex>(device)), runtimeId(id),
                                              nullptr),
              "use_mem_pool");
  });
  m.def("_npu_endAllocateToPool", [](int device, PoolId id) {
    checkPool(npurt::cacheEndAllocateToPool(resolveDevice(static_cast<c10::DeviceIndex>(device)), runtimeId(id)),
              "use_mem_pool");
  });
  m.def("_npu_releasePool", [](int device, PoolId id) {
    checkPool(npurt::cacheReleasePool(resolveDevice(static_cast<c10::DeviceIndex>(device)), runtimeId(id)),
              "use_mem_pool");
  });
}

}  // namespace
}  // namespace torch_npu
