// What the stream code needs from profiling.cpp: the on/off flag read on every enqueue,
// and the wrapper that turns a task into one that leaves a record.
#pragma once

#include <atomic>
#include <cstdint>

#include "npurt/profiling.h"
#include "stream.h"

namespace npurt {

// What a task is, for its record. Built on every enqueue, so it holds no owned strings.
struct TaskInfo {
  npurtTaskKind kind = NPURT_TASK_HOST_FUNC;
  const char* name = nullptr;  // kernel symbol; null: the kind's name
  uint64_t bytes = 0;
  int32_t memcpyKind = -1;
  uint32_t blockDim = 0;
};

extern std::atomic<bool> profilingOn;

// The hit path's only profiling cost while off. A runtime built with
// -DNPURT_PROFILER_HOOKS=OFF has none (bench/bench_profiler.py measures the difference).
#ifdef NPURT_NO_PROFILER_HOOKS
inline constexpr bool profiling() { return false; }
#else
inline bool profiling() { return profilingOn.load(std::memory_order_relaxed); }
#endif

// Captures the queuing thread's correlation id, pid/tid and the enqueue time now; the
// returned task stamps start and end around `task` on the worker and stores the record.
Task profiled(const aclrtStreamImpl* stream, const TaskInfo& info, Task task);

}  // namespace npurt
