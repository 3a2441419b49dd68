// The runtime's profiling records, as the torch glue takes them.
#pragma once

#include <vector>

#include "npurt/profiling.h"

namespace torch_npu::profiler {

// Every finished record not yet taken, oldest first.
std::vector<npurtTaskRecord> takeTaskRecords();

}  // namespace torch_npu::profiler
