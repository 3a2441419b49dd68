// Python bindings for streams. A stream crosses into Python as the triple
// (stream_id, device_index, device_type) that torch.Stream is built from.
#include <pybind11/stl.h>
#include <torch/csrc/Event.h>
#include <torch/csrc/utils/pybind.h>

#include <chrono>
#include <thread>
#include <tuple>

#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/PyBindRegistry.h"
#include "torch_npu/csrc/core/NpuStream.h"

namespace torch_npu {
namespace {

namespace py = pybind11;

using StreamTriple = std::tuple<int64_t, int64_t, int64_t>;

StreamTriple toTriple(c10::Stream s) {
  return {s.id(), s.device_index(), static_cast<int64_t>(s.device_type())};
}

c10::Stream fromTriple(int64_t streamId, int64_t deviceIndex, int64_t deviceType) {
  TORCH_CHECK(deviceType == static_cast<int64_t>(c10::DeviceType::PrivateUse1), "expected an NPU stream\n",
              ptaErr(ErrCode::PARAM));
  return c10::Stream(c10::Stream::UNSAFE,
                     c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(deviceIndex)),
                     streamId);
}

TORCH_NPU_BINDINGS(bindStreams) {
  m.def("_npu_current_stream", [](int device) { return toTriple(getCurrentStream(static_cast<c10::DeviceIndex>(device))); });
  m.def("_npu_default_stream", [](int device) { return toTriple(getDefaultStream(static_cast<c10::DeviceIndex>(device))); });
  m.def("_npu_set_stream", [](int64_t id, int64_t device, int64_t type) {
    exchangeCurrentStream(fromTriple(id, device, type));
  });
  m.def("_npu_stream_priority", [](int64_t id, int64_t device, int64_t type) {
    return streamPriority(fromTriple(id, device, type));
  });
  // Stream.npu_stream: the runtime's aclrtStream handle, as an integer.
  m.def("_npu_stream_handle", [](int64_t id, int64_t device, int64_t type) {
    return reinterpret_cast<uintptr_t>(nativeStream(fromTriple(id, device, type)));
  });
  // ExternalStream: the (stream_id, device_index, device_type) of a raw aclrtStream handle.
  // Looked up among the runtime's streams: a foreign pointer is never dereferenced.
  m.def("_npu_stream_from_handle", [](uintptr_t handle) {
    uint32_t count = 0;
    NPU_CHECK_ACL(aclrtGetDeviceCount(&count));
    for (uint32_t device = 0; device < count; ++device) {
      for (uint32_t index = 0; index < ACL_SYNC_LAUNCH_STREAM_BASE + ACL_SYNC_LAUNCH_STREAM_COUNT; ++index) {
        aclrtStream stream = nullptr;
        NPU_CHECK_ACL(aclrtGetStreamByIndex(static_cast<int32_t>(device), index, &stream));
        if (reinterpret_cast<uintptr_t>(stream) == handle) {
          return StreamTriple{index, device, static_cast<int64_t>(c10::DeviceType::PrivateUse1)};
        }
      }
    }
    TORCH_CHECK_VALUE(false, "stream_ptr ", handle, " is not an aclrtStream of this process\n", ptaErr(ErrCode::VALUE));
  });
  // torch.Event.elapsed_time insists on the exact torch.Event type; torch.npu.Event
  // subclasses it, so it times through here.
  m.def("_npu_event_elapsed_time", [](py::handle start, py::handle end) {
    TORCH_CHECK(THPEvent_Check(start.ptr()) && THPEvent_Check(end.ptr()),
                "elapsed_time expects two torch.Event objects\n", ptaErr(ErrCode::TYPE));
    const c10::Event& first = reinterpret_cast<THPEvent*>(start.ptr())->event;
    const c10::Event& second = reinterpret_cast<THPEvent*>(end.ptr())->event;
    TORCH_CHECK_VALUE(first.flag() == c10::EventFlag::BACKEND_DEFAULT && second.flag() == c10::EventFlag::BACKEND_DEFAULT,
                      "elapsed_time needs both events created with enable_timing=True\n", ptaErr(ErrCode::VALUE));
    py::gil_scoped_release noGil;
    return first.elapsedTime(second);
  });
  // Test-only: a task that keeps the current stream busy for `ms` milliseconds, to
  // observe that the host does not wait for queued work.
  m.def("_npu_sleep_on_stream", [](double ms) {
    launchHostTask(getCurrentStream(-1), [ms] {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
    });
  });
}

}  // namespace
}  // namespace torch_npu
