// Bindings of npurt/device_control.h (stop/restart, operator timeout, utilization,
// sync-launch streams) and torch_npu's ExternalEvent.
#include <pybind11/pybind11.h>

#include <condition_variable>
#include <memory>
#include <mutex>

#include "npurt/device_control.h"
#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/PyBindRegistry.h"
#include "torch_npu/csrc/core/NpuDevice.h"
#include "torch_npu/csrc/core/NpuStream.h"

namespace torch_npu {
namespace {

namespace py = pybind11;

c10::Stream npuStream(int64_t streamId, int64_t deviceIndex, int64_t deviceType) {
  TORCH_CHECK_TYPE(deviceType == static_cast<int64_t>(c10::DeviceType::PrivateUse1),
                   "expected an NPU stream\n", ptaErr(ErrCode::TYPE));
  return c10::Stream(c10::Stream::UNSAFE,
                     c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(deviceIndex)), streamId);
}

// torch_npu.npu.ExternalEvent: CANN's notify-style event, as NPUGraph captures it. Unlike an
// ordinary event, a wait queued before the record blocks its stream until a record is
// reached on another stream; the wait consumes the record (resets the event), and reset()
// clears a record nobody waited for. Each call is a task on the given stream.
class ExternalEvent {
 public:
  void record(int64_t id, int64_t device, int64_t type) {
    launchHostTask(npuStream(id, device, type), [state = state_] {
      {
        std::lock_guard<std::mutex> lock(state->mutex);
        state->recorded = true;
      }
      state->changed.notify_all();
    });
  }

  void wait(int64_t id, int64_t device, int64_t type) {
    launchHostTask(npuStream(id, device, type), [state = state_] {
      std::unique_lock<std::mutex> lock(state->mutex);
      state->changed.wait(lock, [&] { return state->recorded; });
      state->recorded = false;
    });
  }

  void reset(int64_t id, int64_t device, int64_t type) {
    launchHostTask(npuStream(id, device, type), [state = state_] {
      std::lock_guard<std::mutex> lock(state->mutex);
      state->recorded = false;
    });
  }

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable changed;
    bool recorded = false;
  };
  // Shared with the queued tasks: they may run after the Python object is gone.
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

int resolved(int device) { return static_cast<int>(resolveDevice(static_cast<c10::DeviceIndex>(device))); }

TORCH_NPU_BINDINGS(bindDeviceControl) {
  m.def("_npu_stop_device", [](int device) { NPU_CHECK_ACL(npurtDeviceStop(resolved(device))); });
  m.def("_npu_restart_device", [](int device) {
    py::gil_scoped_release noGil;
    NPU_CHECK_ACL(npurtDeviceRestart(resolved(device)));
  });
  m.def("_npu_device_stopped", [](int device) { return npurtDeviceStopped(resolved(device)) != 0; });
  m.def("_npu_set_op_timeout_ms", [](uint32_t ms) { NPU_CHECK_ACL(aclrtSetOpExecuteTimeOutWithMs(ms)); });
  m.def("_npu_op_timeout_ms", [] { return npurtOpExecuteTimeoutMs(); });
  m.def("_npu_utilization", [](int device) {
    int32_t percent = 0;
    NPU_CHECK_ACL(npurtDeviceUtilization(resolved(device), &percent));
    return percent;
  });
  m.attr("_npu_utilization_window_ms") = NPURT_UTILIZATION_WINDOW_MS;
  m.attr("_npu_sync_launch_stream_base") = ACL_SYNC_LAUNCH_STREAM_BASE;
  m.attr("_npu_sync_launch_stream_count") = ACL_SYNC_LAUNCH_STREAM_COUNT;
  py::class_<ExternalEvent>(m, "_NPUExternalEvent")
      .def(py::init<>())
      .def("record", &ExternalEvent::record)
      .def("wait", &ExternalEvent::wait)
      .def("reset", &ExternalEvent::reset);
}

}  // namespace
}  // namespace torch_npu
