// Python face of the eager dispatcher's counters and memory cache (torch_npu.eager.stats).
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include "torch_npu/csrc/PyBindRegistry.h"
#include "torch_npu/csrc/eager/KernelCache.h"
#include "torch_npu/csrc/eager/OpCommand.h"

namespace torch_npu::eager {
namespace {

TORCH_NPU_BINDINGS(bindEager) {
  m.def("_eager_stats", [] {
    pybind11::dict rows;
    for (const auto& [name, row] : statsSnapshot()) {
      pybind11::dict d;
      d["hits"] = row.hits;
      d["misses"] = row.misses;
      d["compiled"] = row.compiled;
      d["fallback"] = row.fallback;
      d["view"] = row.view;
      d["pipeline"] = row.pipeline;
      d["compile_ms"] = row.compileMs;
      if (!row.fallbackReason.empty()) d["fallback_reason"] = row.fallbackReason;
      if (!row.linalgReason.empty()) d["linalg_reason"] = row.linalgReason;
      rows[pybind11::str(name)] = d;
    }
    return rows;
  });
  m.def("_eager_reset_stats", &resetStats);
  m.def("_eager_clear_memory_cache", &clearMemoryCache);
  m.def("_eager_cached_keys", &cachedKeyCount);
  // OpCommand from Python (tests, and ops written in Python); attrs are numbers, bools, int lists, None.
  m.def("_eager_op_command", [](const std::string& name, const std::vector<at::Tensor>& inputs,
                                const pybind11::dict& attrs, const std::vector<at::Tensor>& outputs) {
    OpCommand command;
    command.Name(name);
    for (const at::Tensor& t : inputs) command.Input(t);
    for (const auto& [key, value] : attrs) {
      c10::IValue v;
      if (pybind11::isinstance<pybind11::bool_>(value)) {
        v = value.cast<bool>();
      } else if (pybind11::isinstance<pybind11::int_>(value)) {
        v = value.cast<int64_t>();
      } else if (pybind11::isinstance<pybind11::float_>(value)) {
        v = value.cast<double>();
      } else if (pybind11::isinstance<pybind11::list>(value)) {
        v = value.cast<std::vector<int64_t>>();
      } else if (!value.is_none()) {
        v = value.cast<std::string>();
      }
      command.Attr(key.cast<std::string>(), std::move(v));
    }
    for (const at::Tensor& t : outputs) command.Output(t);
    pybind11::gil_scoped_release release;
    return command.Run();
  });
}

}  // namespace
}  // namespace torch_npu::eager
