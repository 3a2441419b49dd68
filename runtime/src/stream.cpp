#include "stream.h"

#include <chrono>
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
  // Every launch resolves its stream here: the calling thread remembers its last device's streams
  // (never freed) and skips the table's mutex.
  thread_local int32_t lastDevice = -1;
  thread_local aclrtStreamImpl* lastStreams = nullptr;
  if (device == lastDevice) return lastStreams;
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
  lastDevice = device;
  lastStreams = streams.get();
  return lastStreams;
}

void keepFirstError(aclrtStreamImpl* stream, aclError rc) {
  if (rc != ACL_SUCCESS && stream->error == ACL_SUCCESS) {
    stream->error = rc;
    stream->errorMessage = aclGetRecentErrMsg();
  }
}

// How long a worker whose queue ran dry naps before it sleeps until woken. A host loop of small ops
// queues one every few microseconds: waking the worker for each cost a futex call and two context
// switches per launch, and polling for the next one (as it did) kept a thread runnable that took
// the caller's share of a loaded host's cores (one scheduler group per session). Launches queued
// during a nap are not woken for: the worker runs them as one batch when the nap ends (at most
// this much later), and a synchronizing call cuts the nap short.
constexpr auto kNap = std::chrono::microseconds(100);

// Returns with the lock held and a task queued.
void waitForTasks(aclrtStreamImpl* stream, std::unique_lock<std::mutex>& lock) {
  if (!stream->queue.empty()) return;
  stream->workerNapping = true;
  stream->taskQueued.wait_for(lock, kNap, [stream] { return !stream->workerNapping; });
  stream->workerNapping = false;
  if (!stream->queue.empty()) return;
  stream->workerSleeping = true;
  stream->taskQueued.wait(lock, [stream] { return !stream->queue.empty(); });
  stream->workerSleeping = false;
}

void drain(aclrtStreamImpl* stream) {
  // Everything queued is taken at once: one lock per batch, not two per task.
  std::deque<Task> batch;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(stream->mutex);
      waitForTasks(stream, lock);
      batch.swap(stream->queue);
    }
    for (Task& task : batch) {
      // A stopped device drops what was queued (the task's captures are released below).
      aclError rc = ACL_SUCCESS;
      if (deviceStopped(stream->device)) {
        rc = stoppedDeviceError(stream->device, "stream task");
      } else {
        noteTaskStarted(stream->device);
        rc = task();
        noteTaskFinished(stream->device);
      }
      task = nullptr;
      if (rc != ACL_SUCCESS) {
        std::lock_guard<std::mutex> lock(stream->mutex);
        keepFirstError(stream, rc);
      }
    }
    {
      // A synchronizing caller waits for the whole batch: it queued its target before the batch was taken.
      std::lock_guard<std::mutex> lock(stream->mutex);
      stream->finished += batch.size();
    }
    batch.clear();
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
  if (stream->workerNapping && stream->finished < target) {
    stream->workerNapping = false;  // the caller waits: run what is queued now
    stream->taskQueued.notify_one();
  }
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
    ++stream->submitted;
    if (!stream->workerStarted) {
      stream->workerStarted = true;
      std::thread(drain, stream).detach();
    }
    // A napping worker finds the task when its nap ends; only a sleeping one needs the call, and only
    // once: until it runs again, later launches would each pay a futex wake.
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
