#include "stream.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "device.h"
#include "error.h"
#include "graph_capture.h"
#include "profiling_hooks.h"

namespace npurt {
namespace {

constexpr uint32_t kStreamsPerDevice = ACL_SYNC_LAUNCH_STREAM_BASE + ACL_SYNC_LAUNCH_STREAM_COUNT;

struct StreamTable {
  std::mutex mutex;
  std::vector<std::unique_ptr<aclrtStreamImpl[]>> byDevice;
};

// Leaked on purpose, like every runtime singleton: worker threads block on these
// streams' condition variables for the life of the process, and destroying them
// in static destructors while a worker waits would crash at exit.
StreamTable& streamTable() {
  static StreamTable* table = new StreamTable();
  return *table;
}

aclrtStreamImpl* streamsOf(int32_t device) {
  StreamTable& table = streamTable();
  std::lock_guard<std::mutex> lock(table.mutex);
  if (table.byDevice.size() <= static_cast<size_t>(device)) table.byDevice.resize(device + 1);
  auto& streams = table.byDevice[device];
  if (!streams) {
    streams.reset(new aclrtStreamImpl[kStreamsPerDevice]);
    for (uint32_t i = 0; i < kStreamsPerDevice; ++i) {
      streams[i].device = device;
      streams[i].index = i;
      streams[i].priority = i > ACL_STREAM_POOL_SIZE && i < ACL_SYNC_LAUNCH_STREAM_BASE ? -1 : 0;
      streams[i].syncLaunch = i >= ACL_SYNC_LAUNCH_STREAM_BASE;
    }
  }
  return streams.get();
}

void keepFirstError(aclrtStreamImpl* stream, aclError rc) {
  if (rc != ACL_SUCCESS && stream->error == ACL_SUCCESS) {
    stream->error = rc;
    stream->errorMessage = aclGetRecentErrMsg();
  }
}

// How long a worker whose queue ran dry polls for the next task before it sleeps. A host loop of
// small ops queues one every few microseconds: sleeping between them cost a futex wake and two
// context switches per launch (most of the 1-element hit path), polling costs a core for 50 us
// after the last task of a burst.
constexpr int64_t kSpinNs = 50'000;

void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Returns once a task is queued or kSpinNs have passed.
void spinForTask(aclrtStreamImpl* stream) {
  const int64_t until = steadyNowNs() + kSpinNs;
  for (unsigned polls = 0; stream->depth.load(std::memory_order_acquire) == 0; ++polls) {
    if (polls % 64 == 63 && steadyNowNs() > until) return;
    cpuRelax();
  }
}

void drain(aclrtStreamImpl* stream) {
  for (;;) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(stream->mutex);
      if (stream->queue.empty()) {
        lock.unlock();
        spinForTask(stream);
        lock.lock();
        stream->workerSleeping = true;
        stream->taskQueued.wait(lock, [stream] { return !stream->queue.empty(); });
        stream->workerSleeping = false;
      }
      task = std::move(stream->queue.front());
      stream->queue.pop_front();
      stream->depth.fetch_sub(1, std::memory_order_relaxed);
    }
    // A stopped device drops what was queued (the task's captures are released below).
    aclError rc = ACL_SUCCESS;
    if (deviceStopped(stream->device)) {
      rc = stoppedDeviceError(stream->device, "stream task");
    } else {
      noteTaskStarted(stream->device);
      rc = task();
      noteTaskFinished(stream->device);
    }
    {
      std::lock_guard<std::mutex> lock(stream->mutex);
      keepFirstError(stream, rc);
      ++stream->finished;
    }
    stream->taskFinished.notify_all();
  }
}

aclError takeError(aclrtStreamImpl* stream) {
  aclError rc = stream->error;
  std::string message = std::move(stream->errorMessage);
  stream->error = ACL_SUCCESS;
  stream->errorMessage.clear();
  return rc == ACL_SUCCESS ? ACL_SUCCESS : fail(rc, std::move(message));
}

aclError synchronize(aclrtStreamImpl* stream) {
  std::unique_lock<std::mutex> lock(stream->mutex);
  uint64_t target = stream->submitted;
  stream->taskFinished.wait(lock, [stream, target] { return stream->finished >= target; });
  return takeError(stream);
}

}  // namespace

aclError resolveStream(aclrtStream stream, aclrtStream* resolved, const char* caller) {
  if (stream != nullptr) {
    *resolved = stream;
    return ACL_SUCCESS;
  }
  if (aclError rc = checkDevice(currentDevice(), caller)) return rc;
  *resolved = &streamsOf(currentDevice())[0];
  return ACL_SUCCESS;
}

aclError enqueue(aclrtStream stream, Task task, const TaskInfo& info) {
  if (capturing(stream)) return captureRejectTask(stream);
  if (deviceStopped(stream->device)) return stoppedDeviceError(stream->device, "queuing a task");
  if (profiling()) task = profiled(stream, info, std::move(task));
  if (aclrtLaunchBlocking() || stream->syncLaunch) {
    std::lock_guard<std::mutex> run(stream->blockingRun);
    noteTaskStarted(stream->device);
    aclError rc = task();
    noteTaskFinished(stream->device);
    return rc;
  }
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(stream->mutex);
    stream->queue.push_back(std::move(task));
    stream->depth.fetch_add(1, std::memory_order_release);
    ++stream->submitted;
    if (!stream->workerStarted) {
      stream->workerStarted = true;
      std::thread(drain, stream).detach();
    }
    // A polling worker sees `depth`; only a sleeping one needs the call, and only once: until it runs
    // again, later launches would each pay a futex wake (a worker waiting for a loaded host's core).
    wake = stream->workerSleeping;
    stream->workerSleeping = false;
  }
  if (wake) stream->taskQueued.notify_one();
  return ACL_SUCCESS;
}

aclError synchronizeDeviceStreams(int32_t device) {
  // Capturing streams hold no captured work, so waiting is harmless; the capture mode decides.
  if (aclError rc = captureCheckSafe("aclrtSynchronizeDevice")) return rc;
  aclrtStreamImpl* streams = streamsOf(device);
  aclError first = ACL_SUCCESS;
  std::string firstMessage;
  for (uint32_t i = 0; i < kStreamsPerDevice; ++i) {
    aclError rc = synchronize(&streams[i]);
    if (rc != ACL_SUCCESS && first == ACL_SUCCESS) {
      first = rc;
      firstMessage = aclGetRecentErrMsg();
    }
  }
  return first == ACL_SUCCESS ? ACL_SUCCESS : fail(first, std::move(firstMessage));
}

}  // namespace npurt

using npurt::fail;

extern "C" {

int32_t aclrtLaunchBlocking(void) {
  static const int32_t blocking = [] {
    const char* text = std::getenv("ASCEND_LAUNCH_BLOCKING");
    return text != nullptr && std::strcmp(text, "1") == 0 ? 1 : 0;
  }();
  return blocking;
}

aclError aclrtGetStreamByIndex(int32_t deviceId, uint32_t index, aclrtStream* stream) {
  if (stream == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetStreamByIndex: stream is null");
  if (aclError rc = npurt::checkDevice(deviceId, "aclrtGetStreamByIndex")) return rc;
  if (index >= npurt::kStreamsPerDevice) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtGetStreamByIndex: index " + std::to_string(index) +
                                             " is out of range: a device has streams 0.." +
                                             std::to_string(npurt::kStreamsPerDevice - 1));
  }
  *stream = &npurt::streamsOf(deviceId)[index];
  return ACL_SUCCESS;
}

aclError aclrtStreamGetInfo(aclrtStream stream, int32_t* deviceId, uint32_t* index, int32_t* priority) {
  if (aclError rc = npurt::resolveStream(stream, &stream, "aclrtStreamGetInfo")) return rc;
  if (deviceId != nullptr) *deviceId = stream->device;
  if (index != nullptr) *index = stream->index;
  if (priority != nullptr) *priority = stream->priority;
  return ACL_SUCCESS;
}

aclError aclrtSynchronizeStream(aclrtStream stream) {
  if (aclError rc = npurt::resolveStream(stream, &stream, "aclrtSynchronizeStream")) return rc;
  if (aclError rc = npurt::captureCheckStreamSync(stream, "aclrtSynchronizeStream")) return rc;
  return npurt::synchronize(stream);
}

aclError aclrtStreamQuery(aclrtStream stream, int32_t* done) {
  if (done == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtStreamQuery: done is null");
  if (aclError rc = npurt::resolveStream(stream, &stream, "aclrtStreamQuery")) return rc;
  std::lock_guard<std::mutex> lock(stream->mutex);
  *done = stream->finished >= stream->submitted ? 1 : 0;
  return ACL_SUCCESS;
}

}  // extern "C"
