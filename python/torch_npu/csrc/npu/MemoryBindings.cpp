// Python bindings of the caching allocator: stats, snapshots, history, limits.
// torch_npu.npu.memory turns these into torch.cuda.memory's API.
#include <Python.h>
#include <frameobject.h>
#include <pybind11/stl.h>

#include <string>

#include "npurt/acl_rt.h"
#include "npurt/caching_allocator.h"
#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/PyBindRegistry.h"
#include "torch_npu/csrc/core/NpuAllocator.h"
#include "torch_npu/csrc/core/NpuDevice.h"
#include "torch_npu/csrc/core/NpuStream.h"

namespace torch_npu {
namespace {

namespace py = pybind11;

constexpr int kMaxRecordedFrames = 64;

// Allocator errors as Python users expect them: OOM is torch.OutOfMemoryError,
// a bad argument or PYTORCH_NPU_ALLOC_CONF is a ValueError.
void checkAllocator(aclError status, const char* what) {
  if (status == ACL_SUCCESS) return;
  TORCH_CHECK_WITH(OutOfMemoryError, status != ACL_ERROR_RT_MEMORY_ALLOCATION, aclGetRecentErrMsg(), "\n",
                   ptaErr(ErrCode::MEMORY));
  TORCH_CHECK_VALUE(status != ACL_ERROR_INVALID_PARAM && status != ACL_ERROR_RT_INVALID_DEVICEID, what, ": ",
                    aclGetRecentErrMsg(), "\n", ptaErr(ErrCode::VALUE));
  NPU_CHECK_ACL(status);
}

// The history context hook: the Python stack of the allocating thread, one
// "file\tline\tname" line per frame, innermost first. Threads without the GIL
// (stream workers, autograd threads) record no frames.
std::string pythonStack() {
  if (!Py_IsInitialized() || !PyGILState_Check()) return "";
  std::string out;
  PyFrameObject* frame = PyEval_GetFrame();
  Py_XINCREF(frame);
  for (int depth = 0; frame != nullptr && depth < kMaxRecordedFrames; ++depth) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    const char* file = PyUnicode_AsUTF8(code->co_filename);
    const char* name = PyUnicode_AsUTF8(code->co_name);
    out += file != nullptr ? file : "?";
    out += '\t';
    out += std::to_string(PyFrame_GetLineNumber(frame));
    out += '\t';
    out += name != nullptr ? name : "?";
    out += '\n';
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  Py_XDECREF(frame);
  PyErr_Clear();  // a failed UTF-8 conversion must not leak into the caller
  return out;
}

py::list framesOf(const std::string& context) {
  py::list frames;
  size_t start = 0;
  while (start < context.size()) {
    size_t end = context.find('\n', start);
    std::string line = context.substr(start, end - start);
    start = end == std::string::npos ? context.size() : end + 1;
    size_t tab1 = line.find('\t');
    size_t tab2 = tab1 == std::string::npos ? std::string::npos : line.find('\t', tab1 + 1);
    if (tab2 == std::string::npos) continue;
    py::dict frame;
    frame["filename"] = line.substr(0, tab1);
    frame["line"] = std::stoi(line.substr(tab1 + 1, tab2 - tab1 - 1));
    frame["name"] = line.substr(tab2 + 1);
    frames.append(frame);
  }
  return frames;
}

int64_t streamIndex(aclrtStream stream) {
  uint32_t index = 0;
  if (stream == nullptr || aclrtStreamGetInfo(stream, nullptr, &index, nullptr) != ACL_SUCCESS) return 0;
  return index;
}

py::dict statDict(const npurt::Stat& stat) {
  py::dict d;
  d["current"] = stat.current;
  d["peak"] = stat.peak;
  d["allocated"] = stat.allocated;
  d["freed"] = stat.freed;
  return d;
}

py::dict statArrayDict(const npurt::StatArray& stats) {
  py::dict d;
  d["all"] = statDict(stats[npurt::kStatAggregate]);
  d["small_pool"] = statDict(stats[npurt::kStatSmallPool]);
  d["large_pool"] = statDict(stats[npurt::kStatLargePool]);
  return d;
}

// The nested dict torch._C._cuda_memoryStats returns.
py::dict memoryStats(int device) {
  npurt::DeviceStats stats;
  checkAllocator(npurt::cacheGetStats(resolveDevice(device), &stats), "memory_stats");
  py::dict d;
  d["num_alloc_retries"] = stats.num_alloc_retries;
  d["num_ooms"] = stats.num_ooms;
  d["max_split_size"] = stats.max_split_size;
  d["num_sync_all_streams"] = stats.num_sync_all_streams;
  d["num_device_alloc"] = stats.num_device_alloc;
  d["num_device_free"] = stats.num_device_free;
  d["allocation"] = statArrayDict(stats.allocation);
  d["segment"] = statArrayDict(stats.segment);
  d["active"] = statArrayDict(stats.active);
  d["inactive_split"] = statArrayDict(stats.inactive_split);
  d["allocated_bytes"] = statArrayDict(stats.allocated_bytes);
  d["reserved_bytes"] = statArrayDict(stats.reserved_bytes);
  d["active_bytes"] = statArrayDict(stats.active_bytes);
  d["inactive_split_bytes"] = statArrayDict(stats.inactive_split_bytes);
  d["requested_bytes"] = statArrayDict(stats.requested_bytes);
  d["oversize_allocations"] = statDict(stats.oversize_allocations);
  d["oversize_segments"] = statDict(stats.oversize_segments);
  return d;
}

py::dict hostStatDict(const c10::CachingAllocator::Stat& stat) {
  py::dict d;
  d["current"] = stat.current;
  d["peak"] = stat.peak;
  d["allocated"] = stat.allocated;
  d["freed"] = stat.freed;
  return d;
}

py::dict durationDict(const c10::CachingAllocator::DurationStat& stat) {
  py::dict d;
  d["total"] = stat.total;
  d["max"] = stat.max;
  d["min"] = stat.min;
  d["count"] = stat.count;
  d["avg"] = stat.count == 0 ? 0 : stat.total / stat.count;
  return d;
}

// The nested dict torch._C._cuda_hostMemoryStats returns, from the pinned cache.
py::dict hostMemoryStats() {
  at::HostStats stats = pinnedAllocator()->get_stats();
  py::dict d;
  d["num_host_alloc"] = stats.num_host_alloc;
  d["num_host_free"] = stats.num_host_free;
  d["allocations"] = hostStatDict(stats.allocations);
  d["allocated_bytes"] = hostStatDict(stats.allocated_bytes);
  d["active_requests"] = hostStatDict(stats.active_requests);
  d["active_bytes"] = hostStatDict(stats.active_bytes);
  d["host_alloc_time"] = durationDict(stats.host_alloc_time);
  d["host_free_time"] = durationDict(stats.host_free_time);
  return d;
}

const char* stateName(npurt::BlockState state) {
  switch (state) {
    case npurt::BlockState::kActiveAllocated: return "active_allocated";
    case npurt::BlockState::kActivePendingFree: return "active_pending_free";
    case npurt::BlockState::kInactive: return "inactive";
  }
  return "inactive";
}

const char* actionName(npurt::TraceEntry::Action action) {
  switch (action) {
    case npurt::TraceEntry::kAlloc: return "alloc";
    case npurt::TraceEntry::kFreeRequested: return "free_requested";
    case npurt::TraceEntry::kFreeCompleted: return "free_completed";
    case npurt::TraceEntry::kSegmentAlloc: return "segment_alloc";
    case npurt::TraceEntry::kSegmentFree: return "segment_free";
    case npurt::TraceEntry::kOom: return "oom";
  }
  return "alloc";
}

py::dict segmentDict(const npurt::SegmentSnapshot& segment) {
  py::list blocks;
  for (const npurt::BlockSnapshot& block : segment.blocks) {
    py::dict b;
    b["address"] = block.address;
    b["size"] = block.size;
    b["requested_size"] = block.requested_size;
    b["state"] = stateName(block.state);
    b["frames"] = framesOf(block.context);
    blocks.append(b);
  }
  py::dict d;
  d["device"] = segment.device;
  d["address"] = segment.address;
  d["total_size"] = segment.total_size;
  d["allocated_size"] = segment.allocated_size;
  d["active_size"] = segment.active_size;
  d["requested_size"] = segment.requested_size;
  d["stream"] = streamIndex(segment.stream);
  d["segment_type"] = segment.is_large ? "large" : "small";
  d["segment_pool_id"] = py::make_tuple(segment.pool.first, segment.pool.second);
  d["is_expandable"] = false;  // segments never grow in place here (caching_allocator.h)
  d["frames"] = segment.blocks.empty() ? py::list() : framesOf(segment.blocks.front().context);
  d["blocks"] = blocks;
  return d;
}

py::dict traceDict(const npurt::TraceEntry& entry) {
  py::dict d;
  d["action"] = actionName(entry.action);
  d["addr"] = entry.addr;
  d["size"] = entry.size;
  d["stream"] = streamIndex(entry.stream);
  d["time_us"] = entry.time_us;
  d["frames"] = framesOf(entry.context);
  if (entry.action == npurt::TraceEntry::kOom) d["device_free"] = entry.addr;
  return d;
}

// torch.cuda.memory._snapshot()'s layout: {"segments": [...], "device_traces": [[...], ...]}.
py::dict memorySnapshot() {
  npurt::MemorySnapshot snapshot;
  checkAllocator(npurt::cacheSnapshot(&snapshot), "memory_snapshot");
  py::list segments;
  for (const auto& segment : snapshot.segments) segments.append(segmentDict(segment));
  py::list traces;
  for (const auto& trace : snapshot.device_traces) {
    py::list entries;
    for (const auto& entry : trace) entries.append(traceDict(entry));
    traces.append(entries);
  }
  py::dict d;
  d["segments"] = segments;
  d["device_traces"] = traces;
  return d;
}

uintptr_t cachingAllocatorAlloc(size_t size, int device, int streamIndex) {
  c10::DeviceIndex resolved = resolveDevice(device);
  markInitialized(resolved);
  aclrtStream stream = nullptr;
  if (streamIndex < 0) {
    stream = nativeStream(getCurrentStream(resolved));
  } else {
    checkAllocator(aclrtGetStreamByIndex(resolved, static_cast<uint32_t>(streamIndex), &stream),
                   "caching_allocator_alloc");
  }
  void* ptr = nullptr;
  checkAllocator(npurt::cacheMalloc(&ptr, size, resolved, stream), "caching_allocator_alloc");
  return reinterpret_cast<uintptr_t>(ptr);
}

TORCH_NPU_BINDINGS(bindMemory) {
  m.def("_npu_memory_stats", &memoryStats, py::arg("device"));
  m.def("_npu_reset_peak_memory_stats", [](int device) {
    checkAllocator(npurt::cacheResetPeakStats(resolveDevice(device)), "reset_peak_memory_stats");
  });
  m.def("_npu_reset_accumulated_memory_stats", [](int device) {
    checkAllocator(npurt::cacheResetAccumulatedStats(resolveDevice(device)), "reset_accumulated_memory_stats");
  });
  m.def("_npu_empty_cache", [] {
    py::gil_scoped_release noGil;  // waits for pending frees on the streams
    checkAllocator(npurt::cacheEmpty(-1), "empty_cache");
  });
  m.def("_npu_set_memory_fraction", [](double fraction, int device) {
    checkAllocator(npurt::cacheSetMemoryFraction(fraction, resolveDevice(device)), "set_per_process_memory_fraction");
  });
  m.def("_npu_get_memory_fraction", [](int device) {
    double fraction = 1.0;
    checkAllocator(npurt::cacheGetMemoryFraction(resolveDevice(device), &fraction), "get_per_process_memory_fraction");
    return fraction;
  });
  m.def("_npu_mem_get_info", [](int device) {
    size_t freeBytes = 0, totalBytes = 0;
    checkAllocator(aclrtGetMemInfo(resolveDevice(device), &freeBytes, &totalBytes), "mem_get_info");
    return py::make_tuple(freeBytes, totalBytes);
  });
  m.def("_npu_caching_allocator_alloc", &cachingAllocatorAlloc, py::arg("size"), py::arg("device"),
        py::arg("stream_index"));
  m.def("_npu_caching_allocator_delete", [](uintptr_t ptr) {
    checkAllocator(npurt::cacheFree(reinterpret_cast<void*>(ptr)), "caching_allocator_delete");
  });
  m.def("_npu_memory_snapshot", &memorySnapshot);
  m.def("_npu_host_memory_stats", &hostMemoryStats);
  m.def("_npu_change_allocator", [](uintptr_t alloc, uintptr_t free) {
    usePluggableAllocator(reinterpret_cast<PluggableAlloc>(alloc), reinterpret_cast<PluggableFree>(free));
  });
  m.def("_npu_allocator_backend", [] { return std::string(allocatorBackend()); });
  m.def("_npu_erase_stream", [](uintptr_t ptr, int64_t id, int64_t device) {
    c10::Stream stream(c10::Stream::UNSAFE, c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(device)), id);
    checkAllocator(npurt::cacheEraseStream(reinterpret_cast<void*>(ptr), nativeStream(stream)), "erase_stream");
  });
  m.def("_npu_host_empty_cache", [] {
    py::gil_scoped_release noGil;
    pinnedAllocator()->empty_cache();
  });
  m.def("_npu_reset_accumulated_host_memory_stats", [] { pinnedAllocator()->reset_accumulated_stats(); });
  m.def("_npu_reset_peak_host_memory_stats", [] { pinnedAllocator()->reset_peak_stats(); });
  m.def("_npu_host_mem_info", [] {
    size_t used = 0, limit = 0;
    checkAllocator(aclrtGetHostMemInfo(&used, &limit), "host_mem_info");
    return py::make_tuple(used, limit);
  });
  m.def("_npu_record_memory_history", [](bool enabled, bool withStacks, size_t maxEntries) {
    checkAllocator(npurt::cacheRecordHistory(enabled ? 1 : 0, maxEntries, withStacks ? &pythonStack : nullptr),
                   "_record_memory_history");
  });
}

}  // namespace
}  // namespace torch_npu
