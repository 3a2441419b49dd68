// Python face of compiled graphs (torch_npu.dynamo.executable): a launch-list record in, a
// CompiledGraph out that runs with no Python per kernel.
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include <unordered_map>

#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/PyBindRegistry.h"
#include "torch_npu/csrc/eager/CompileMiss.h"
#include "torch_npu/csrc/graph/CompiledGraph.h"

namespace py = pybind11;

namespace torch_npu::graph {
namespace {

// The record npu_mlir.frontend.fx_graph.build returns (the eager record's launch-list part).
eager::KernelRecord recordFrom(const py::dict& result) {
  static const std::unordered_map<std::string, eager::LaunchArg::Kind> kinds = {
      {"in", eager::LaunchArg::Kind::Input}, {"out", eager::LaunchArg::Kind::Output},
      {"tmp", eager::LaunchArg::Kind::Temp}, {"param", eager::LaunchArg::Kind::Param}};
  eager::KernelRecord record;
  for (const py::handle& item : result["launches"]) {
    eager::Launch launch;
    launch.symbol = item["symbol"].cast<std::string>();
    launch.fn = eager::loadKernel(item["so_path"].cast<std::string>(), launch.symbol);
    launch.blockDim = item["block_dim"].cast<uint32_t>();
    for (const py::handle& ref : item["refs"]) {
      auto [kind, index] = ref.cast<std::pair<std::string, int>>();
      auto it = kinds.find(kind);
      TORCH_CHECK(it != kinds.end(), "a compiled graph's launch reads a buffer of kind ", kind, "\n",
                  errCode(SubModule::GRAPH, ErrCode::INTERNAL));
      launch.args.push_back({it->second, index});
    }
    record.launches.push_back(std::move(launch));
  }
  record.tempBytes = result["temps"].cast<std::vector<int64_t>>();
  record.pipeline = true;
  for (const py::handle& item : result["outputs"]) {
    auto [sizes, dtype] = item.cast<std::pair<std::vector<int64_t>, std::string>>();
    record.outputs.push_back({sizes, eager::dtypeFromMlir(dtype)});
  }
  return record;
}

TORCH_NPU_BINDINGS(bindCompiledGraphs) {
  py::class_<CompiledGraph>(m, "_CompiledGraph")
      .def(py::init([](const py::dict& record, std::vector<int> aliases, size_t inputCount, uint64_t philoxIncrement) {
             return CompiledGraph(recordFrom(record), std::move(aliases), inputCount, philoxIncrement);
           }),
           py::arg("record"), py::arg("aliases"), py::arg("input_count"), py::arg("philox_increment") = 0)
      .def("run", &CompiledGraph::run, py::arg("inputs"), py::arg("params"), py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("launch_count", &CompiledGraph::launchCount)
      .def_property_readonly("arena_bytes", &CompiledGraph::arenaBytes);
}

}  // namespace
}  // namespace torch_npu::graph
