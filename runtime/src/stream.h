// Streams: a FIFO of tasks per stream, drained by a worker thread started on the first task.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "npurt/acl_rt.h"

namespace npurt {

// A task returns ACL_SUCCESS or a code whose message it recorded with fail().
using Task = std::function<aclError()>;

struct CaptureState;  // graph_capture.cpp

}  // namespace npurt

struct aclrtStreamImpl {
  int32_t device = 0;
  uint32_t index = 0;
  int32_t priority = 0;  // torch's convention: lower is higher priority

  std::mutex mutex;
  std::condition_variable taskQueued;
  std::condition_variable taskFinished;
  std::deque<npurt::Task> queue;
  uint64_t submitted = 0;
  uint64_t finished = 0;
  aclError error = ACL_SUCCESS;  // the first task error since the last synchronizing call
  std::string errorMessage;
  bool workerStarted = false;
  // The worker waits on taskQueued (enqueue must notify it); false while it runs or naps.
  bool workerSleeping = false;
  // The worker naps for the next tasks (stream.cpp); a synchronizing caller clears it to wake it early.
  bool workerNapping = false;
  // Serialises tasks run in the caller under ASCEND_LAUNCH_BLOCKING=1 or on a sync-launch stream.
  std::mutex blockingRun;
  bool syncLaunch = false;  // ACL_SYNC_LAUNCH_STREAM_BASE.. : every task runs in the caller
  // The capture recording this stream's tasks (graph_capture.h), null when none.
  std::atomic<npurt::CaptureState*> capture{nullptr};
};

namespace npurt {

// NULL means the current device's default stream, as in ACL.
aclError resolveStream(aclrtStream stream, aclrtStream* resolved, const char* caller);
struct TaskInfo;
// Queues `task` (or, under ASCEND_LAUNCH_BLOCKING=1, runs it now and returns its status).
// `info` describes it for the profiling record taken while profiling is on.
aclError enqueue(aclrtStream stream, Task task, const TaskInfo& info);
// Waits for every stream of `device`; returns (and clears) the first pending error.
aclError synchronizeDeviceStreams(int32_t device);

}  // namespace npurt
