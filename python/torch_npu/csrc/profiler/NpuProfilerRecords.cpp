#include "torch_npu/csrc/profiler/NpuProfilerRecords.h"

#include <pybind11/stl.h>

#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/PyBindRegistry.h"

namespace torch_npu::profiler {

std::vector<npurtTaskRecord> takeTaskRecords() {
  std::vector<npurtTaskRecord> records(npurtProfilerPendingRecords());
  size_t count = 0;
  NPU_CHECK_ACL(npurtProfilerTakeRecords(records.data(), records.size(), &count));
  records.resize(count);
  return records;
}

namespace {

// For tests and diagnostics: whether the runtime is recording, and what it holds.
TORCH_NPU_BINDINGS(bindProfilerRecords) {
  m.def("_profiler_runtime_enabled", [] { return npurtProfilerEnabled() != 0; });
  m.def("_profiler_pending_records", [] { return npurtProfilerPendingRecords(); });
  m.def("_profiler_dropped_records", [] { return npurtProfilerDroppedRecords(); });
}

}  // namespace
}  // namespace torch_npu::profiler
