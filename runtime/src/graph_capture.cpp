// Stream capture and graph replay (npurt/acl_mdl.h): a capture is a list of recorded calls;
// replay makes the same calls again on the replay stream. Streams are FIFOs, so one list in
// host recording order is a valid order for work captured across joined streams too.
#include "graph_capture.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "error.h"
#include "profiling_hooks.h"

namespace npurt {

std::atomic<int> activeCaptures{0};

namespace {

// A host function the runtime owns: released when no task or graph can run it any more.
struct OwnedHostFunc {
  aclrtHostFunc fn = nullptr;
  void* userData = nullptr;
  npurtReleaseFunc release = nullptr;
  ~OwnedHostFunc() {
    if (release != nullptr) release(userData);
  }
};

// Where a replay writes a parameter into a kernel's argument bytes.
struct ArgPatch {
  size_t byteOffset;
  uint32_t slot;
  uint64_t addend;
};

struct Node {
  enum class Kind { Kernel, Copy, Fill, HostFunc, EventRecord, EventWait };
  explicit Node(Kind k) : kind(k) {}
  Kind kind;
  aclrtKernelFunc kernel = nullptr;
  uint32_t blockDim = 0;
  std::vector<uint8_t> args;
  std::string name;
  std::vector<ArgPatch> patches;
  void* dst = nullptr;
  const void* src = nullptr;
  size_t count = 0;
  aclrtMemcpyKind copyKind = ACL_MEMCPY_DEVICE_TO_DEVICE;
  int32_t value = 0;
  std::shared_ptr<OwnedHostFunc> host;
  aclrtEvent event = nullptr;  // null once the event was destroyed: the node is skipped
};

const char* modeName(aclmdlRICaptureMode mode) {
  switch (mode) {
    case ACL_MODEL_RI_CAPTURE_MODE_GLOBAL: return "global";
    case ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL: return "thread_local";
    case ACL_MODEL_RI_CAPTURE_MODE_RELAXED: return "relaxed";
  }
  return "?";
}

std::string streamName(aclrtStream stream) {
  return "stream " + std::to_string(stream->index) + " of device " + std::to_string(stream->device);
}

}  // namespace

struct CaptureState {
  aclrtStream origin = nullptr;
  aclmdlRICaptureMode mode = ACL_MODEL_RI_CAPTURE_MODE_GLOBAL;
  std::thread::id thread;
  aclmdlRI graph = nullptr;
  std::string invalidatedBy;  // empty while valid
  std::vector<aclrtStream> members;  // origin first, then the streams that joined
  std::unordered_set<aclrtEvent> events;  // recorded inside this capture
  std::unordered_map<uint64_t, std::pair<uint32_t, uint64_t>> placeholders;  // value -> (slot, addend)
};

}  // namespace npurt

struct aclmdlRIImpl {
  int32_t device = 0;
  std::vector<npurt::Node> nodes;
  std::mutex paramMutex;
  std::vector<uint64_t> params;
};

namespace npurt {
namespace {

thread_local aclmdlRICaptureMode threadMode = ACL_MODEL_RI_CAPTURE_MODE_GLOBAL;

struct CaptureRegistry {
  std::mutex mutex;
  std::vector<CaptureState*> active;
  std::unordered_map<aclrtEvent, CaptureState*> eventOwner;  // events recorded in active captures
  std::unordered_set<aclmdlRI> graphs;                       // every live graph
  uint64_t placeholderCounter = 0;
  uint64_t placeholderKey = std::random_device{}() | (uint64_t(std::random_device{}()) << 32);
};

// Leaked on purpose, like the other runtime singletons (workers may use it at exit).
CaptureRegistry& registry() {
  static CaptureRegistry* instance = new CaptureRegistry();
  return *instance;
}

// Requires the registry lock. The capture stays in place (its streams keep recording
// nothing) until aclmdlRICaptureEnd reports why it failed.
void invalidate(CaptureState* capture, const std::string& why) {
  if (capture->invalidatedBy.empty()) capture->invalidatedBy = why;
}

// Requires the registry lock: the capture `stream` records into, or a failure when it was invalidated.
aclError recordingCapture(aclrtStream stream, CaptureState** out) {
  CaptureState* capture = stream->capture.load(std::memory_order_acquire);
  if (capture != nullptr && !capture->invalidatedBy.empty()) {
    return fail(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED,
                "operation failed due to a previous error during capture: the capture on " + streamName(capture->origin) +
                    " was invalidated (" + capture->invalidatedBy + "); end it with capture_end() and capture again");
  }
  *out = capture;
  return ACL_SUCCESS;
}

// Records `node` if `stream` is still capturing (it may have ended since the fast check).
bool record(aclrtStream stream, Node node, aclError* rc) {
  CaptureRegistry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  CaptureState* capture = nullptr;
  *rc = recordingCapture(stream, &capture);
  if (*rc != ACL_SUCCESS) return true;
  if (capture == nullptr) return false;
  if (node.kind == Node::Kind::Kernel && !capture->placeholders.empty()) {
    for (size_t offset = 0; offset + sizeof(uint64_t) <= node.args.size(); offset += sizeof(uint64_t)) {
      uint64_t value;
      std::memcpy(&value, node.args.data() + offset, sizeof(value));
      auto it = capture->placeholders.find(value);
      if (it != capture->placeholders.end()) node.patches.push_back({offset, it->second.first, it->second.second});
    }
  }
  capture->graph->nodes.push_back(std::move(node));
  return true;
}

std::string prohibitedMessage(const char* call, const CaptureState* capture, const std::string& reason) {
  return std::string(call) + ": operation not permitted when stream is capturing: " + streamName(capture->origin) +
         " is capturing an NPU graph" + reason + "; the capture is now invalidated";
}

// Requires the registry lock: the active capture that recorded `event`, if any.
CaptureState* ownerOf(aclrtEvent event) {
  CaptureRegistry& reg = registry();
  auto it = reg.eventOwner.find(event);
  return it == reg.eventOwner.end() ? nullptr : it->second;
}

aclError replayNode(const Node& node, const std::vector<uint64_t>& params, aclrtStream stream) {
  switch (node.kind) {
    case Node::Kind::Kernel: {
      if (node.patches.empty()) {
        return aclrtLaunchKernel(node.kernel, node.blockDim, node.args.data(), node.args.size(), node.name.c_str(),
                                 stream);
      }
      std::vector<uint8_t> args = node.args;
      for (const ArgPatch& patch : node.patches) {
        uint64_t value = (patch.slot < params.size() ? params[patch.slot] : 0) + patch.addend;
        std::memcpy(args.data() + patch.byteOffset, &value, sizeof(value));
      }
      return aclrtLaunchKernel(node.kernel, node.blockDim, args.data(), args.size(), node.name.c_str(), stream);
    }
    case Node::Kind::Copy:
      return aclrtMemcpyAsync(node.dst, node.count, node.src, node.count, node.copyKind, stream);
    case Node::Kind::Fill:
      return aclrtMemsetAsync(node.dst, node.count, node.value, node.count, stream);
    case Node::Kind::HostFunc: {
      auto* shared = new std::shared_ptr<OwnedHostFunc>(node.host);
      return npurtLaunchHostFuncOwned(
          stream,
          [](void* data) {
            const OwnedHostFunc& host = **static_cast<std::shared_ptr<OwnedHostFunc>*>(data);
            return host.fn(host.userData);
          },
          shared, [](void* data) { delete static_cast<std::shared_ptr<OwnedHostFunc>*>(data); });
    }
    case Node::Kind::EventRecord:
      return node.event == nullptr ? ACL_SUCCESS : aclrtRecordEvent(node.event, stream);
    case Node::Kind::EventWait:
      return node.event == nullptr ? ACL_SUCCESS : aclrtStreamWaitEvent(stream, node.event);
  }
  return ACL_SUCCESS;
}

const char* nodeKindName(Node::Kind kind) {
  switch (kind) {
    case Node::Kind::Kernel: return "kernel";
    case Node::Kind::Copy: return "memcpy";
    case Node::Kind::Fill: return "memset";
    case Node::Kind::HostFunc: return "host_func";
    case Node::Kind::EventRecord: return "event_record";
    case Node::Kind::EventWait: return "event_wait";
  }
  return "?";
}

}  // namespace

bool captureKernel(aclrtStream stream, aclrtKernelFunc kernel, uint32_t blockDim, const void* args, size_t argsSize,
                   const char* name, aclError* rc) {
  Node node(Node::Kind::Kernel);
  node.kernel = kernel;
  node.blockDim = blockDim;
  const uint8_t* bytes = static_cast<const uint8_t*>(args);
  node.args.assign(bytes, bytes + argsSize);
  node.name = name != nullptr ? name : "<unnamed>";
  return record(stream, std::move(node), rc);
}

bool captureCopy(aclrtStream stream, void* dst, const void* src, size_t count, aclrtMemcpyKind kind, aclError* rc) {
  if (kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_HOST) {
    // As with CUDA graphs: only pinned host memory may take part in a captured copy, since
    // pageable memory may be gone or reused by the time a replay runs.
    const void* host = kind == ACL_MEMCPY_HOST_TO_DEVICE ? src : dst;
    aclrtMemLocation location = ACL_MEM_LOCATION_UNREGISTERED;
    int32_t device = -1;
    aclrtPointerGetAttributes(host, &location, &device);
    if (location != ACL_MEM_LOCATION_HOST_PINNED && count > 0) {
      CaptureRegistry& reg = registry();
      std::lock_guard<std::mutex> lock(reg.mutex);
      CaptureState* capture = stream->capture.load(std::memory_order_acquire);
      if (capture == nullptr) return false;
      std::string message = prohibitedMessage(
          "aclrtMemcpyAsync", capture,
          ": a copy between the device and pageable host memory cannot be captured (.item(), .cpu(), "
          "torch.tensor(..., device='npu') inside the capture); copy outside the capture or use pinned memory");
      invalidate(capture, message);
      *rc = fail(ACL_ERROR_RT_STREAM_CAPTURE_UNSUPPORTED, message);
      return true;
    }
  }
  Node node(Node::Kind::Copy);
  node.dst = dst;
  node.src = src;
  node.count = count;
  node.copyKind = kind;
  return record(stream, std::move(node), rc);
}

bool captureFill(aclrtStream stream, void* devPtr, int32_t value, size_t count, aclError* rc) {
  Node node(Node::Kind::Fill);
  node.dst = devPtr;
  node.value = value;
  node.count = count;
  return record(stream, std::move(node), rc);
}

bool captureHostFunc(aclrtStream stream, aclrtHostFunc fn, void* userData, npurtReleaseFunc release, aclError* rc) {
  Node node(Node::Kind::HostFunc);
  std::shared_ptr<OwnedHostFunc> host = std::make_shared<OwnedHostFunc>();
  host->fn = fn;
  host->userData = userData;
  node.host = host;
  bool recorded = record(stream, std::move(node), rc);
  // The graph releases the data only once it holds the call: otherwise the caller still owns it.
  if (recorded && *rc == ACL_SUCCESS) host->release = release;
  return recorded;
}

bool captureEventRecord(aclrtStream stream, aclrtEvent event, aclError* rc) {
  CaptureRegistry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  CaptureState* capture = nullptr;
  *rc = recordingCapture(stream, &capture);
  if (*rc != ACL_SUCCESS) return true;
  if (capture == nullptr) return false;
  Node node(Node::Kind::EventRecord);
  node.event = event;
  capture->graph->nodes.push_back(std::move(node));
  capture->events.insert(event);
  reg.eventOwner[event] = capture;
  return true;
}

bool captureEventWait(aclrtStream stream, aclrtEvent event, aclError* rc) {
  CaptureRegistry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  CaptureState* capture = nullptr;
  *rc = recordingCapture(stream, &capture);
  if (*rc != ACL_SUCCESS) return true;
  CaptureState* owner = ownerOf(event);
  if (capture == nullptr) {
    if (owner == nullptr) return false;
    // A fork: the stream waits on captured work, so its own work joins the capture.
    if (owner->origin->device != stream->device) {
      *rc = fail(ACL_ERROR_RT_STREAM_CAPTURE_UNSUPPORTED,
                 "aclrtStreamWaitEvent: " + streamName(stream) + " cannot join the capture on " +
                     streamName(owner->origin) + ": a capture stays on one device");
      return true;
    }
    stream->capture.store(owner, std::memory_order_release);
    owner->members.push_back(stream);
    return true;
  }
  if (owner == capture) return true;  // ordered already: the graph replays in recording order
  Node node(Node::Kind::EventWait);
  node.event = event;
  capture->graph->nodes.push_back(std::move(node));
  return true;
}

void captureForgetEvent(aclrtEvent event) {
  CaptureRegistry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  if (CaptureState* owner = ownerOf(event)) owner->events.erase(event);
  reg.eventOwner.erase(event);
  for (aclmdlRI graph : reg.graphs) {
    for (Node& node : graph->nodes) {
      if (node.event == event) node.event = nullptr;
    }
  }
  for (CaptureState* capture : reg.active) {
    for (Node& node : capture->graph->nodes) {
      if (node.event == event) node.event = nullptr;
    }
  }
}

aclError captureCheckStreamSync(aclrtStream stream, const char* call) {
  if (!captureActive()) return ACL_SUCCESS;
  {
    CaptureRegistry& reg = registry();
    std::lock_guard<std::mutex> lock(reg.mutex);
    CaptureState* capture = stream->capture.load(std::memory_order_acquire);
    if (capture != nullptr) {
      std::string message = prohibitedMessage(
          call, capture,
          (stream == capture->origin ? std::string() : ", which " + streamName(stream) + " joined") +
              ", and waiting for it would wait for work that runs only at replay (synchronize(), .item(), a "
              "blocking copy to the host, or an op that falls back to the CPU inside the capture)");
      invalidate(capture, message);
      return fail(ACL_ERROR_RT_STREAM_CAPTURE_UNSUPPORTED, message);
    }
  }
  return captureCheckSafe(call);
}

aclError captureCheckEventSync(aclrtEvent event, const char* call) {
  if (!captureActive()) return ACL_SUCCESS;
  {
    CaptureRegistry& reg = registry();
    std::lock_guard<std::mutex> lock(reg.mutex);
    if (CaptureState* owner = ownerOf(event)) {
      std::string message =
          prohibitedMessage(call, owner, ", and the event was recorded inside the capture: it completes only at replay");
      invalidate(owner, message);
      return fail(ACL_ERROR_RT_STREAM_CAPTURE_UNSUPPORTED, message);
    }
  }
  return captureCheckSafe(call);
}

aclError captureCheckSafe(const char* call) {
  if (!captureActive() || threadMode == ACL_MODEL_RI_CAPTURE_MODE_RELAXED) return ACL_SUCCESS;
  CaptureRegistry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  std::thread::id self = std::this_thread::get_id();
  std::string message;
  for (CaptureState* capture : reg.active) {
    bool forbids = capture->mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL ||
                   (capture->mode == ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL && capture->thread == self);
    if (!forbids) continue;
    std::string reason = std::string(" with capture_error_mode='") + modeName(capture->mode) + "'" +
                         (capture->thread == self ? "" : " in another thread") +
                         ", which forbids synchronizing calls" +
                         (capture->thread == self ? "" : " from every thread (use 'thread_local' or 'relaxed')");
    std::string text = prohibitedMessage(call, capture, reason);
    invalidate(capture, text);
    if (message.empty()) message = text;
  }
  return message.empty() ? ACL_SUCCESS : fail(ACL_ERROR_RT_STREAM_CAPTURE_UNSUPPORTED, message);
}

aclError captureRejectTask(aclrtStream stream) {
  return fail(ACL_ERROR_RT_STREAM_CAPTURE_UNSUPPORTED,
              "this kind of task cannot be captured: " + streamName(stream) +
                  " is capturing an NPU graph (collectives and other work outside kernels, copies, fills, host "
                  "functions and events are not recorded)");
}

bool captureUnderwayOn(int32_t device) {
  if (!captureActive()) return false;
  CaptureRegistry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  for (CaptureState* capture : reg.active) {
    if (capture->origin->device == device) return true;
  }
  return false;
}

aclrtStream captureOriginOf(aclrtStream stream) {
  if (!capturing(stream)) return nullptr;
  CaptureRegistry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  CaptureState* capture = stream->capture.load(std::memory_order_acquire);
  return capture == nullptr ? nullptr : capture->origin;
}

}  // namespace npurt

using npurt::fail;

extern "C" {

aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode) {
  if (mode < ACL_MODEL_RI_CAPTURE_MODE_GLOBAL || mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclmdlRICaptureBegin: unknown capture mode " + std::to_string(mode) +
                                             " (0 global, 1 thread_local, 2 relaxed)");
  }
  if (aclError rc = npurt::resolveStream(stream, &stream, "aclmdlRICaptureBegin")) return rc;
  if (stream->index == 0) {
    return fail(ACL_ERROR_RT_STREAM_CAPTURE_UNSUPPORTED,
                "aclmdlRICaptureBegin: the default stream cannot be captured: capture on a non-default stream");
  }
  npurt::CaptureRegistry& reg = npurt::registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  if (stream->capture.load() != nullptr) {
    return fail(ACL_ERROR_RT_STREAM_CAPTURE_UNSUPPORTED,
                "aclmdlRICaptureBegin: " + npurt::streamName(stream) + " is already capturing");
  }
  auto* capture = new npurt::CaptureState();
  capture->origin = stream;
  capture->mode = mode;
  capture->thread = std::this_thread::get_id();
  capture->graph = new aclmdlRIImpl();
  capture->graph->device = stream->device;
  capture->members.push_back(stream);
  reg.active.push_back(capture);
  stream->capture.store(capture, std::memory_order_release);
  npurt::activeCaptures.fetch_add(1);
  return ACL_SUCCESS;
}

aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus* status, aclmdlRI* modelRI) {
  if (status == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclmdlRICaptureGetInfo: status is null");
  if (aclError rc = npurt::resolveStream(stream, &stream, "aclmdlRICaptureGetInfo")) return rc;
  *status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
  if (modelRI != nullptr) *modelRI = nullptr;
  if (!npurt::captureActive()) return ACL_SUCCESS;
  npurt::CaptureRegistry& reg = npurt::registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  npurt::CaptureState* capture = stream->capture.load();
  if (capture == nullptr) return ACL_SUCCESS;
  *status = capture->invalidatedBy.empty() ? ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE : ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED;
  if (modelRI != nullptr) *modelRI = capture->graph;
  return ACL_SUCCESS;
}

aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI* modelRI) {
  if (modelRI == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclmdlRICaptureEnd: modelRI is null");
  *modelRI = nullptr;
  if (aclError rc = npurt::resolveStream(stream, &stream, "aclmdlRICaptureEnd")) return rc;
  npurt::CaptureRegistry& reg = npurt::registry();
  std::unique_ptr<npurt::CaptureState> capture;
  {
    std::lock_guard<std::mutex> lock(reg.mutex);
    npurt::CaptureState* state = stream->capture.load();
    if (state == nullptr || state->origin != stream) {
      return fail(ACL_ERROR_RT_STREAM_CAPTURE_UNSUPPORTED,
                  "aclmdlRICaptureEnd: " + npurt::streamName(stream) +
                      (state == nullptr ? " is not capturing" : " joined a capture but did not begin it"));
    }
    capture.reset(state);
    for (aclrtStream member : capture->members) member->capture.store(nullptr, std::memory_order_release);
    reg.active.erase(std::find(reg.active.begin(), reg.active.end(), state));
    for (aclrtEvent event : capture->events) reg.eventOwner.erase(event);
    npurt::activeCaptures.fetch_sub(1);
    if (capture->invalidatedBy.empty()) reg.graphs.insert(capture->graph);
  }
  if (!capture->invalidatedBy.empty()) {
    delete capture->graph;
    return fail(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED,
                "aclmdlRICaptureEnd: operation failed due to a previous error during capture: " + capture->invalidatedBy);
  }
  *modelRI = capture->graph;
  return ACL_SUCCESS;
}

aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream) {
  if (modelRI == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclmdlRIExecuteAsync: modelRI is null");
  if (aclError rc = npurt::resolveStream(stream, &stream, "aclmdlRIExecuteAsync")) return rc;
  if (stream->device != modelRI->device) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclmdlRIExecuteAsync: the graph was captured on device " +
                                             std::to_string(modelRI->device) + " but the stream belongs to device " +
                                             std::to_string(stream->device));
  }
  std::vector<uint64_t> params;
  {
    std::lock_guard<std::mutex> lock(modelRI->paramMutex);
    params = modelRI->params;
  }
  for (const npurt::Node& node : modelRI->nodes) {
    if (aclError rc = npurt::replayNode(node, params, stream)) return rc;
  }
  return ACL_SUCCESS;
}

aclError aclmdlRIDestroy(aclmdlRI modelRI) {
  if (modelRI == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclmdlRIDestroy: modelRI is null");
  npurt::CaptureRegistry& reg = npurt::registry();
  {
    std::lock_guard<std::mutex> lock(reg.mutex);
    if (reg.graphs.erase(modelRI) == 0) {
      return fail(ACL_ERROR_INVALID_PARAM, "aclmdlRIDestroy: not a live graph from aclmdlRICaptureEnd");
    }
  }
  // Host functions still queued by a replay hold their own references.
  delete modelRI;
  return ACL_SUCCESS;
}

aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode* mode) {
  if (mode == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclmdlRICaptureThreadExchangeMode: mode is null");
  if (*mode < ACL_MODEL_RI_CAPTURE_MODE_GLOBAL || *mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclmdlRICaptureThreadExchangeMode: unknown capture mode " +
                                             std::to_string(*mode));
  }
  std::swap(*mode, npurt::threadMode);
  return ACL_SUCCESS;
}

aclError npurtGraphTaskCount(aclmdlRI modelRI, size_t* count) {
  if (modelRI == nullptr || count == nullptr) {
    return fail(ACL_ERROR_INVALID_PARAM, "npurtGraphTaskCount: modelRI and count must not be null");
  }
  *count = modelRI->nodes.size();
  return ACL_SUCCESS;
}

aclError npurtGraphDump(aclmdlRI modelRI, const char* path) {
  if (modelRI == nullptr || path == nullptr) {
    return fail(ACL_ERROR_INVALID_PARAM, "npurtGraphDump: modelRI and path must not be null");
  }
  std::FILE* out = std::fopen(path, "w");
  if (out == nullptr) return fail(ACL_ERROR_INVALID_PARAM, std::string("npurtGraphDump: cannot write ") + path);
  std::fprintf(out, "graph on device %d: %zu tasks\n", modelRI->device, modelRI->nodes.size());
  for (size_t i = 0; i < modelRI->nodes.size(); ++i) {
    const npurt::Node& node = modelRI->nodes[i];
    std::fprintf(out, "%zu %s", i, npurt::nodeKindName(node.kind));
    if (node.kind == npurt::Node::Kind::Kernel) {
      std::fprintf(out, " %s block_dim=%u args=%zu patched=%zu", node.name.c_str(), node.blockDim, node.args.size(),
                   node.patches.size());
    } else if (node.kind == npurt::Node::Kind::Copy || node.kind == npurt::Node::Kind::Fill) {
      std::fprintf(out, " bytes=%zu", node.count);
    }
    std::fprintf(out, "\n");
  }
  std::fclose(out);
  return ACL_SUCCESS;
}

aclError npurtCaptureParam(aclrtStream stream, uint32_t slot, uint64_t addend, uint64_t* placeholder) {
  if (placeholder == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "npurtCaptureParam: placeholder is null");
  if (aclError rc = npurt::resolveStream(stream, &stream, "npurtCaptureParam")) return rc;
  npurt::CaptureRegistry& reg = npurt::registry();
  std::lock_guard<std::mutex> lock(reg.mutex);
  npurt::CaptureState* capture = nullptr;
  if (aclError rc = npurt::recordingCapture(stream, &capture)) return rc;
  if (capture == nullptr) {
    return fail(ACL_ERROR_INVALID_PARAM, "npurtCaptureParam: " + npurt::streamName(stream) + " is not capturing");
  }
  if (slot >= capture->graph->params.size()) capture->graph->params.resize(slot + 1, 0);
  // A mixed counter: unique, and with overwhelming probability unlike any real argument.
  uint64_t value;
  do {
    value = (++reg.placeholderCounter * 0x9E3779B97F4A7C15ull) ^ reg.placeholderKey;
  } while (capture->placeholders.count(value) != 0 || value < (uint64_t(1) << 48));
  capture->placeholders[value] = {slot, addend};
  *placeholder = value;
  return ACL_SUCCESS;
}

aclError npurtGraphSetParam(aclmdlRI modelRI, uint32_t slot, uint64_t value) {
  if (modelRI == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "npurtGraphSetParam: modelRI is null");
  std::lock_guard<std::mutex> lock(modelRI->paramMutex);
  if (slot >= modelRI->params.size()) {
    return fail(ACL_ERROR_INVALID_PARAM, "npurtGraphSetParam: slot " + std::to_string(slot) + " is out of range: the "
                                             "capture asked for " + std::to_string(modelRI->params.size()) +
                                             " parameters");
  }
  modelRI->params[slot] = value;
  return ACL_SUCCESS;
}

aclError npurtLaunchHostFuncOwned(aclrtStream stream, aclrtHostFunc fn, void* userData, npurtReleaseFunc release) {
  if (fn == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "npurtLaunchHostFuncOwned: fn is null");
  if (aclError rc = npurt::resolveStream(stream, &stream, "npurtLaunchHostFuncOwned")) {
    if (release != nullptr) release(userData);
    return rc;
  }
  aclError rc = ACL_SUCCESS;
  if (npurt::capturing(stream) && npurt::captureHostFunc(stream, fn, userData, release, &rc)) {
    if (rc != ACL_SUCCESS && release != nullptr) release(userData);
    return rc;
  }
  auto host = std::make_shared<npurt::OwnedHostFunc>();
  host->fn = fn;
  host->userData = userData;
  host->release = release;
  return npurt::enqueue(
      stream,
      [host] {
        int32_t code = host->fn(host->userData);
        if (code == 0) return ACL_SUCCESS;
        return fail(ACL_ERROR_RT_INTERNAL_ERROR, "host function on the stream failed with code " + std::to_string(code));
      },
      npurt::TaskInfo{NPURT_TASK_HOST_FUNC});
}

}  // extern "C"
