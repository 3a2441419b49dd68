// Python face of compiled graphs (torch_npu.dynamo.executable): a launch-list record in, a
// CompiledGraph out that runs with no Python per kernel.
#include <pybind11/stl.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>

#include <unordered_map>

#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/PyBindRegistry.h"
#include "torch_npu/csrc/eager/CompileMiss.h"
#include "torch_npu/csrc/graph/CompiledGraph.h"

namespace py = pybind11;

namespace torch_npu::graph {
namespace {

// A graph's npu_mlir.tools.compile_protocol.KernelRecord (from fx_graph.build through a worker).
eager::KernelRecord recordFrom(const py::handle& result) {
  eager::KernelRecord record;
  eager::readLaunchList(result, record);
  return record;
}

// The call plan executable.py describes (see CallPlan).
CallPlan planFrom(const py::dict& plan) {
  CallPlan out;
  out.inputArgs = plan["inputs"].cast<std::vector<int>>();
  out.inputStrides = plan["strides"].cast<std::vector<std::vector<int64_t>>>();
  out.copyBack = plan["copy_back"].cast<std::vector<std::pair<int, int>>>();
  out.device = plan["device"].cast<c10::DeviceIndex>();
  for (const py::handle& item : plan["outputs"]) {
    OutputView view;
    auto kind = item["base"].cast<std::string>();
    view.base = kind == "none" ? OutputView::Base::None
                : kind == "input" ? OutputView::Base::Argument : OutputView::Base::Result;
    if (view.base != OutputView::Base::None) {
      view.index = item["index"].cast<int>();
      view.view = item["view"].cast<bool>();
    }
    if (view.view) {
      view.sizes = item["sizes"].cast<std::vector<int64_t>>();
      view.strides = item["strides"].cast<std::vector<int64_t>>();
      view.offset = item["offset"].cast<int64_t>();
      view.absolute = item["absolute"].cast<bool>();
      view.baseSizes = item["base_sizes"].cast<std::vector<int64_t>>();
      view.baseStrides = item["base_strides"].cast<std::vector<int64_t>>();
      if (item.contains("dynamic")) {  // a chunked graph (ChunkPlan): [dim, scale, base dim, base scale]
        auto dynamic = item["dynamic"].cast<std::vector<int64_t>>();
        view.dynamicDim = static_cast<int>(dynamic[0]);
        view.dynamicScale = dynamic[1];
        view.baseDynamicDim = static_cast<int>(dynamic[2]);
        view.baseDynamicScale = dynamic[3];
      }
    }
    out.outputs.push_back(std::move(view));
  }
  if (plan.contains("chunk")) {
    py::dict chunk = plan["chunk"];
    out.chunk.extent = chunk["extent"].cast<int64_t>();
    std::tie(out.chunk.sizeArg, out.chunk.sizeDim, out.chunk.sizeScale) =
        chunk["size"].cast<std::tuple<int, int, int64_t>>();
    out.chunk.inputStep = chunk["input_step"].cast<std::vector<int64_t>>();
    out.chunk.outputDim = chunk["output_dim"].cast<std::vector<int>>();
    out.chunk.outputScale = chunk["output_scale"].cast<std::vector<int64_t>>();
    out.chunk.sizeParam = chunk["size_param"].cast<int>();
    out.chunk.firstRowParam = chunk["first_row_param"].cast<int>();
  }
  return out;
}

// A compiled graph with its call plan; `replay(i, base)` makes output i in Python when its view
// chain does not give the traced layout (CompiledGraph::call).
struct BoundGraph {
  CompiledGraph graph;
  CallPlan plan;
  py::object replay;

  py::list call(const py::list& args) const {
    std::vector<at::Tensor> tensors(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      PyObject* item = args[i].ptr();
      if (THPVariable_Check(item)) tensors[i] = THPVariable_Unpack(item);
    }
    std::vector<std::pair<size_t, at::Tensor>> replayed;
    std::vector<at::Tensor> outputs;
    {
      py::gil_scoped_release nogil;
      outputs = graph.call(plan, tensors, replayed);
    }
    py::list result(outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      result[i] = outputs[i].defined() ? py::reinterpret_steal<py::object>(THPVariable_Wrap(outputs[i])) : py::none();
    }
    for (auto& [i, base] : replayed) result[i] = replay(i, py::reinterpret_steal<py::object>(THPVariable_Wrap(base)));
    return result;
  }
};

TORCH_NPU_BINDINGS(bindCompiledGraphs) {
  py::class_<BoundGraph>(m, "_CompiledGraph", py::dynamic_attr())
      .def(py::init([](const py::object& record, std::vector<int> aliases, size_t inputCount, uint64_t philoxIncrement,
                       const py::dict& plan, py::object replay) {
             return BoundGraph{CompiledGraph(recordFrom(record), std::move(aliases), inputCount, philoxIncrement),
                               planFrom(plan), std::move(replay)};
           }),
           py::arg("record"), py::arg("aliases"), py::arg("input_count"), py::arg("philox_increment"),
           py::arg("plan"), py::arg("replay"))
      .def("__call__", &BoundGraph::call, py::arg("args"))
      .def_property_readonly("launch_count", [](const BoundGraph& g) { return g.graph.launchCount(); })
      .def_property_readonly("arena_bytes", [](const BoundGraph& g) { return g.graph.arenaBytes(); });
  m.def("_compiled_graph_inputs_copied", &copiedInputCount);
}

}  // namespace
}  // namespace torch_npu::graph
