// NPU storages shared between processes, as torch.cuda does it (torch/csrc/StorageSharing.cpp
// and CUDAIPCTypes): the sender exports its storage's bytes with a key and keeps the block
// alive until every receiver has released that key; the receiver maps the same bytes.
//
// Sender: _npu_share_storage swaps the storage's DataPtr for one whose context (SentData)
// owns the original block, its export keys and an interprocess event recorded on the
// current stream (receivers wait for it, so pending writes land first). When the storage
// dies while receivers still hold a key, the SentData waits in a limbo list that
// _npu_ipc_collect (torch.npu.ipc_collect) and every later share sweep.
// Receiver: _npu_new_shared_storage imports the key into a non-resizable storage whose
// deleter closes the key (releasing the sender's count). Sharing that storage again forwards
// the key with one more count (forwardReceived).
#include <c10/core/StorageImpl.h>
#include <pybind11/stl.h>
#include <torch/csrc/Storage.h>
#include <torch/csrc/utils/pybind.h>

#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "npurt/acl_rt.h"
#include "npurt/ipc.h"
#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/PyBindRegistry.h"
#include "torch_npu/csrc/core/NpuStream.h"

namespace torch_npu {
namespace {

namespace py = pybind11;

struct SentData {
  c10::DataPtr original;
  std::vector<std::string> keys;  // one per share; receivers release each once
  aclrtEvent event = nullptr;     // ACL_EVENT_IPC, re-recorded at each share

  // Whether every receiver released its key; then the keys are closed.
  bool released() {
    for (const std::string& key : keys) {
      int64_t holders = 0;
      if (npurt::ipcExportInUse(key.c_str(), &holders) == ACL_SUCCESS && holders > 0) return false;
    }
    for (const std::string& key : keys) (void)aclrtIpcMemClose(key.c_str());
    keys.clear();
    return true;
  }

  ~SentData() {
    if (event != nullptr) (void)aclrtDestroyEvent(event);
  }
};

struct Limbo {
  std::mutex mutex;
  std::list<std::unique_ptr<SentData>> waiting;
};

// Leaked on purpose: storages may die while static destructors run.
Limbo& limbo() {
  static Limbo* instance = new Limbo();
  return *instance;
}

// Frees the blocks of dead shared storages whose receivers let go.
size_t collectLimbo() {
  std::list<std::unique_ptr<SentData>> done;
  {
    Limbo& l = limbo();
    std::lock_guard<std::mutex> lock(l.mutex);
    for (auto it = l.waiting.begin(); it != l.waiting.end();) {
      if ((*it)->released()) {
        done.push_back(std::move(*it));
        it = l.waiting.erase(it);
      } else {
        ++it;
      }
    }
  }
  return done.size();  // their blocks return to the cache here, outside the lock
}

void deleteSentData(void* ctx) {
  std::unique_ptr<SentData> sent(static_cast<SentData*>(ctx));
  if (sent->released()) return;
  Limbo& l = limbo();
  std::lock_guard<std::mutex> lock(l.mutex);
  l.waiting.push_back(std::move(sent));
}

struct ReceivedData {
  std::string key;
};

void deleteReceivedData(void* ctx) {
  std::unique_ptr<ReceivedData> received(static_cast<ReceivedData*>(ctx));
  (void)aclrtIpcMemClose(received->key.c_str());  // a deleter cannot throw
}

std::string ipcMessage(const char* what) {
  return std::string(what) + ": " + aclGetRecentErrMsg();
}

// A received storage sent on (to a third process, or back): the key it was opened with, one
// more holder counted on it, so the exporter keeps the block for the next receiver too. Its
// writes queued here are done before the key leaves (no event: the storage may die before
// the receiver opens one).
py::tuple forwardReceived(c10::StorageImpl& impl) {
  c10::DeviceIndex device = impl.device().index();
  const std::string& key = static_cast<ReceivedData*>(impl.data_ptr().get_context())->key;
  {
    py::gil_scoped_release noGil;
    NPU_CHECK_ACL(aclrtSynchronizeStream(nativeStream(getCurrentStream(device))));
  }
  TORCH_CHECK(npurt::ipcForwardKey(key.c_str()) == ACL_SUCCESS,
              ipcMessage("sending a received npu storage on to another process failed"), "\n",
              ptaErr(ErrCode::NOT_SUPPORT));
  return py::make_tuple(device, py::bytes(key), impl.nbytes(), py::none());
}

// (device, key, nbytes, event handle): what a receiver needs to open the storage.
py::tuple shareStorage(py::handle object) {
  TORCH_CHECK(THPStorage_Check(object.ptr()), "_share_npu_ expects a torch.UntypedStorage\n", ptaErr(ErrCode::TYPE));
  const c10::Storage& storage = THPStorage_Unpack(object.ptr());
  c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
  TORCH_CHECK(impl->device_type() == c10::DeviceType::PrivateUse1, "_share_npu_: the storage is on ", impl->device(),
              ", not an npu\n", ptaErr(ErrCode::PARAM));
  c10::DeviceIndex device = impl->device().index();
  if (impl->nbytes() == 0) return py::make_tuple(device, py::none(), 0, py::none());
  if (impl->data_ptr().get_deleter() == &deleteReceivedData) return forwardReceived(*impl);
  collectLimbo();
  SentData* sent = nullptr;
  if (impl->data_ptr().get_deleter() == &deleteSentData) {
    sent = static_cast<SentData*>(impl->data_ptr().get_context());
  } else {
    auto fresh = std::make_unique<SentData>();
    NPU_CHECK_ACL(aclrtCreateEventWithFlag(&fresh->event, ACL_EVENT_IPC));
    void* data = impl->mutable_data();
    fresh->original =
        impl->set_data_ptr(c10::DataPtr(data, fresh.get(), &deleteSentData, impl->device()));
    sent = fresh.release();
  }
  char key[ACL_IPC_MEM_KEY_LEN];
  aclError status = aclrtIpcMemGetExportKey(impl->mutable_data(), impl->nbytes(), key, sizeof(key), 0);
  TORCH_CHECK(status == ACL_SUCCESS, ipcMessage("sharing an npu storage with another process failed"), "\n",
              ptaErr(ErrCode::NOT_SUPPORT));
  sent->keys.emplace_back(key);
  // Receivers order their use after the writes queued here so far.
  NPU_CHECK_ACL(aclrtRecordEvent(sent->event, nativeStream(getCurrentStream(device))));
  aclrtIpcEventHandle handle;
  NPU_CHECK_ACL(aclrtIpcGetEventHandle(sent->event, &handle));
  return py::make_tuple(device, py::bytes(key), impl->nbytes(),
                        py::bytes(reinterpret_cast<const char*>(&handle), sizeof(handle)));
}

py::object newSharedStorage(c10::DeviceIndex device, const std::string& key, size_t nbytes,
                            const std::string& eventHandle) {
  void* data = nullptr;
  aclError status = aclrtIpcMemImportByKey(&data, key.c_str(), 0);
  if (status != ACL_SUCCESS) {
    std::string message = ipcMessage("opening an npu storage shared by another process failed");
    (void)aclrtIpcMemClose(key.c_str());  // the sender's count for this key
    TORCH_CHECK(false, message, "\n", ptaErr(ErrCode::UNAVAIL));
  }
  c10::Device where(c10::DeviceType::PrivateUse1, device);
  c10::DataPtr ptr(data, new ReceivedData{key}, &deleteReceivedData, where);
  if (eventHandle.size() == sizeof(aclrtIpcEventHandle)) {
    aclrtIpcEventHandle handle;
    std::memcpy(&handle, eventHandle.data(), sizeof(handle));
    aclrtEvent event = nullptr;
    NPU_CHECK_ACL(aclrtIpcOpenEventHandle(handle, &event));
    aclError waited = aclrtStreamWaitEvent(nativeStream(getCurrentStream(device)), event);
    (void)aclrtDestroyEvent(event);  // the wait holds the shared slot, not the handle
    NPU_CHECK_ACL(waited);
  }
  auto impl = c10::make_intrusive<c10::StorageImpl>(c10::StorageImpl::use_byte_size_t(), nbytes, std::move(ptr),
                                                    /*allocator=*/nullptr, /*resizable=*/false);
  return py::reinterpret_steal<py::object>(THPStorage_Wrap(c10::Storage(std::move(impl))));
}

// The runtime event behind torch.npu.Event(interprocess=True): created here, or opened
// from another process's handle; destroyed with the Python object.
class IpcEvent {
 public:
  explicit IpcEvent(c10::DeviceIndex device) : device_(device) {
    NPU_CHECK_ACL(aclrtCreateEventWithFlag(&event_, ACL_EVENT_IPC));
  }
  IpcEvent(c10::DeviceIndex device, const std::string& handle) : device_(device) {
    TORCH_CHECK_VALUE(handle.size() == sizeof(aclrtIpcEventHandle), "Event.from_ipc_handle: expected a ",
                      sizeof(aclrtIpcEventHandle), "-byte handle from Event.ipc_handle(), got ", handle.size(),
                      " bytes\n", ptaErr(ErrCode::VALUE));
    aclrtIpcEventHandle raw;
    std::memcpy(&raw, handle.data(), sizeof(raw));
    aclError status = aclrtIpcOpenEventHandle(raw, &event_);
    TORCH_CHECK_VALUE(status == ACL_SUCCESS, ipcMessage("Event.from_ipc_handle"), "\n", ptaErr(ErrCode::VALUE));
  }
  IpcEvent(const IpcEvent&) = delete;
  IpcEvent& operator=(const IpcEvent&) = delete;
  ~IpcEvent() { (void)aclrtDestroyEvent(event_); }

  c10::DeviceIndex device() const { return device_; }
  void record(int64_t streamId, int64_t deviceIndex) { NPU_CHECK_ACL(aclrtRecordEvent(event_, stream(streamId, deviceIndex))); }
  void wait(int64_t streamId, int64_t deviceIndex) { NPU_CHECK_ACL(aclrtStreamWaitEvent(stream(streamId, deviceIndex), event_)); }
  bool query() {
    int32_t done = 0;
    NPU_CHECK_ACL(aclrtQueryEventStatus(event_, &done));
    return done != 0;
  }
  void synchronize() { NPU_CHECK_ACL(aclrtSynchronizeEvent(event_)); }
  py::bytes handle() {
    aclrtIpcEventHandle raw;
    NPU_CHECK_ACL(aclrtIpcGetEventHandle(event_, &raw));
    return py::bytes(reinterpret_cast<const char*>(&raw), sizeof(raw));
  }

 private:
  static aclrtStream stream(int64_t streamId, int64_t deviceIndex) {
    return nativeStream(c10::Stream(c10::Stream::UNSAFE,
                                    c10::Device(c10::DeviceType::PrivateUse1, static_cast<c10::DeviceIndex>(deviceIndex)),
                                    streamId));
  }

  c10::DeviceIndex device_;
  aclrtEvent event_ = nullptr;
};

TORCH_NPU_BINDINGS(bindIpc) {
  py::class_<IpcEvent>(m, "_NpuIpcEvent")
      .def(py::init<c10::DeviceIndex>(), py::arg("device"))
      .def(py::init<c10::DeviceIndex, const std::string&>(), py::arg("device"), py::arg("handle"))
      .def_property_readonly("device", &IpcEvent::device)
      .def("record", &IpcEvent::record, py::arg("stream_id"), py::arg("device_index"))
      .def("wait", &IpcEvent::wait, py::arg("stream_id"), py::arg("device_index"))
      .def("query", &IpcEvent::query)
      .def("synchronize", &IpcEvent::synchronize, py::call_guard<py::gil_scoped_release>())
      .def("ipc_handle", &IpcEvent::handle);
  m.def("_npu_share_storage", &shareStorage, py::arg("storage"));
  m.def("_npu_new_shared_storage", &newSharedStorage, py::arg("device"), py::arg("key"), py::arg("nbytes"),
        py::arg("event_handle"));
  // A receiver that already had the storage open releases the sender's count for the key.
  m.def("_npu_ipc_release_key", [](const std::string& key) { (void)npurt::ipcReleaseKey(key.c_str()); });
  m.def("_npu_ipc_collect", [] { return collectLimbo(); });
  m.def("_npu_ipc_counts", [] {
    npurt::IpcCounts counts = npurt::ipcCounts();
    size_t waiting = 0;
    {
      Limbo& l = limbo();
      std::lock_guard<std::mutex> lock(l.mutex);
      waiting = l.waiting.size();
    }
    return py::dict(py::arg("imported_segments") = counts.importedSegments,
                    py::arg("open_export_keys") = counts.openExportKeys, py::arg("ipc_events") = counts.ipcEvents,
                    py::arg("limbo") = waiting);
  });
}

}  // namespace
}  // namespace torch_npu
