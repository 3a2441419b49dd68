// Python face of the eager dispatcher's counters and memory cache (torch_npu.eager.stats).
#include <pybind11/stl.h>

#include "torch_npu/csrc/PyBindRegistry.h"
#include "torch_npu/csrc/eager/KernelCache.h"

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
      d["compile_ms"] = row.compileMs;
      rows[pybind11::str(name)] = d;
    }
    return rows;
  });
  m.def("_eager_reset_stats", &resetStats);
  m.def("_eager_clear_memory_cache", &clearMemoryCache);
  m.def("_eager_cached_keys", &cachedKeyCount);
}

}  // namespace
}  // namespace torch_npu::eager
