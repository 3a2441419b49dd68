// Events: recording is a task that stamps the event on the stream's worker;
// waiting is a task that blocks that stream's worker until the event completes.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "error.h"
#include "graph_capture.h"
#include "ipc.h"
#include "profiling_hooks.h"
#include "stream.h"

namespace npurt {
namespace {

// Shared with queued tasks, so destroying an event with work still in flight is safe.
struct EventState {
  std::mutex mutex;
  std::condition_variable completedCv;
  uint32_t flags = 0;
  uint64_t recorded = 0;   // generation of the latest aclrtRecordEvent
  uint64_t completed = 0;  // latest generation whose task has run
  int64_t timestampNs = 0;
  // Interprocess events (ACL_EVENT_IPC) keep generations and timestamp in shared memory
  // instead; `ownsSlot` is set in the creating process, which frees the slot.
  IpcEventSlot* shared = nullptr;
  bool ownsSlot = false;
  uint32_t slotIndex = 0;
  aclrtIpcEventHandle handle{};

  ~EventState() {
    if (ownsSlot) ipcReleaseEventSlot(slotIndex);
  }
};

// Whether generation `done` has reached `target` (32-bit shared generations may wrap).
bool reached(uint32_t done, uint32_t target) { return static_cast<int32_t>(done - target) >= 0; }

// Blocks until the shared event's completed generation reaches `target`.
void waitShared(IpcEventSlot* slot, uint32_t target) {
  for (;;) {
    uint32_t done = slot->completed.load(std::memory_order_acquire);
    if (reached(done, target)) return;
    sharedWait(&slot->completed, done, 50);
  }
}

void completeShared(IpcEventSlot* slot, uint32_t generation) {
  uint32_t done = slot->completed.load(std::memory_order_relaxed);
  // A later record may already have completed, in this process or another: keep the latest.
  while (!reached(done, generation)) {
    if (slot->completed.compare_exchange_weak(done, generation, std::memory_order_acq_rel)) break;
  }
  sharedWake(&slot->completed);
}

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace
}  // namespace npurt

struct aclrtEventImpl {
  std::shared_ptr<npurt::EventState> state = std::make_shared<npurt::EventState>();
};

using npurt::fail;

extern "C" {

aclError aclrtCreateEventWithFlag(aclrtEvent* event, uint32_t flag) {
  if (event == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateEventWithFlag: event is null");
  if ((flag & ~(ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE | ACL_EVENT_IPC)) != 0) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateEventWithFlag: unknown flag bits " + std::to_string(flag) +
                                             " (use ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE | ACL_EVENT_IPC)");
  }
  if ((flag & ACL_EVENT_IPC) && (flag & ACL_EVENT_TIME_LINE)) {
    // As CUDA: an interprocess event takes no timestamps.
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateEventWithFlag: ACL_EVENT_IPC cannot be combined with "
                                         "ACL_EVENT_TIME_LINE (torch: interprocess=True needs enable_timing=False)");
  }
  auto created = new aclrtEventImpl();
  npurt::EventState& state = *created->state;
  state.flags = flag;
  if (flag & ACL_EVENT_IPC) {
    aclError rc = npurt::ipcCreateEventSlot(&state.shared, &state.slotIndex);
    if (rc == ACL_SUCCESS) {
      state.ownsSlot = true;
      rc = npurt::ipcEventHandle(state.slotIndex, &state.handle);
    }
    if (rc != ACL_SUCCESS) {
      delete created;
      return rc;
    }
  }
  *event = created;
  return ACL_SUCCESS;
}

aclError aclrtIpcGetEventHandle(aclrtEvent event, aclrtIpcEventHandle* handle) {
  if (event == nullptr || handle == nullptr) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtIpcGetEventHandle: event and handle must not be null");
  }
  if (event->state->shared == nullptr) {
    return fail(ACL_ERROR_INVALID_PARAM,
                "aclrtIpcGetEventHandle: the event was not created with ACL_EVENT_IPC (torch: interprocess=True)");
  }
  *handle = event->state->handle;
  return ACL_SUCCESS;
}

aclError aclrtIpcOpenEventHandle(aclrtIpcEventHandle handle, aclrtEvent* event) {
  if (event == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtIpcOpenEventHandle: event is null");
  npurt::IpcEventSlot* slot = nullptr;
  if (aclError rc = npurt::ipcOpenEventSlot(handle, &slot)) return rc;
  auto opened = new aclrtEventImpl();
  opened->state->flags = ACL_EVENT_IPC;
  opened->state->shared = slot;
  opened->state->handle = handle;
  *event = opened;
  return ACL_SUCCESS;
}

aclError aclrtDestroyEvent(aclrtEvent event) {
  if (event == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtDestroyEvent: event is null");
  npurt::captureForgetEvent(event);
  delete event;
  return ACL_SUCCESS;
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
  if (event == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtRecordEvent: event is null");
  if (aclError rc = npurt::resolveStream(stream, &stream, "aclrtRecordEvent")) return rc;
  aclError captured = ACL_SUCCESS;
  if (npurt::capturing(stream) && npurt::captureEventRecord(stream, event, &captured)) return captured;
  std::shared_ptr<npurt::EventState> state = event->state;
  if (npurt::IpcEventSlot* slot = state->shared) {
    uint32_t generation = slot->recorded.fetch_add(1, std::memory_order_acq_rel) + 1;
    return npurt::enqueue(stream, [state, slot, generation] {
      npurt::completeShared(slot, generation);
      return ACL_SUCCESS;
    }, npurt::TaskInfo{NPURT_TASK_EVENT_RECORD});
  }
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    generation = ++state->recorded;
  }
  return npurt::enqueue(stream, [state, generation] {
    int64_t timestamp = npurt::nowNs();
    {
      std::lock_guard<std::mutex> lock(state->mutex);
      // A later record may already have completed on another stream: keep the latest.
      if (generation > state->completed) {
        state->completed = generation;
        state->timestampNs = timestamp;
      }
    }
    state->completedCv.notify_all();
    return ACL_SUCCESS;
  }, npurt::TaskInfo{NPURT_TASK_EVENT_RECORD});
}

aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
  if (event == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtStreamWaitEvent: event is null");
  if (aclError rc = npurt::resolveStream(stream, &stream, "aclrtStreamWaitEvent")) return rc;
  aclError captured = ACL_SUCCESS;
  if (npurt::captureActive() && npurt::captureEventWait(stream, event, &captured)) return captured;
  std::shared_ptr<npurt::EventState> state = event->state;
  if (npurt::IpcEventSlot* slot = state->shared) {
    uint32_t target = slot->recorded.load(std::memory_order_acquire);
    if (target == 0) return ACL_SUCCESS;
    return npurt::enqueue(stream, [state, slot, target] {
      npurt::waitShared(slot, target);
      return ACL_SUCCESS;
    }, npurt::TaskInfo{NPURT_TASK_EVENT_WAIT});
  }
  uint64_t target;
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    target = state->recorded;
  }
  if (target == 0) return ACL_SUCCESS;  // never recorded: nothing to wait for, as in ACL/CUDA
  return npurt::enqueue(stream, [state, target] {
    std::unique_lock<std::mutex> lock(state->mutex);
    state->completedCv.wait(lock, [&] { return state->completed >= target; });
    return ACL_SUCCESS;
  }, npurt::TaskInfo{NPURT_TASK_EVENT_WAIT});
}

aclError aclrtQueryEventStatus(aclrtEvent event, int32_t* complete) {
  if (event == nullptr || complete == nullptr) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtQueryEventStatus: event and complete must not be null");
  }
  npurt::EventState& state = *event->state;
  if (npurt::IpcEventSlot* slot = state.shared) {
    *complete = npurt::reached(slot->completed.load(std::memory_order_acquire),
                               slot->recorded.load(std::memory_order_acquire));
    return ACL_SUCCESS;
  }
  std::lock_guard<std::mutex> lock(state.mutex);
  *complete = state.completed >= state.recorded ? 1 : 0;
  return ACL_SUCCESS;
}

aclError aclrtSynchronizeEvent(aclrtEvent event) {
  if (event == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtSynchronizeEvent: event is null");
  if (aclError rc = npurt::captureCheckEventSync(event, "aclrtSynchronizeEvent")) return rc;
  npurt::EventState& state = *event->state;
  if (npurt::IpcEventSlot* slot = state.shared) {
    npurt::waitShared(slot, slot->recorded.load(std::memory_order_acquire));
    return ACL_SUCCESS;
  }
  std::unique_lock<std::mutex> lock(state.mutex);
  uint64_t target = state.recorded;
  state.completedCv.wait(lock, [&] { return state.completed >= target; });
  return ACL_SUCCESS;
}

aclError aclrtEventElapsedTime(float* ms, aclrtEvent start, aclrtEvent end) {
  if (ms == nullptr || start == nullptr || end == nullptr) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtEventElapsedTime: ms, start and end must not be null");
  }
  int64_t stamps[2];
  aclrtEvent events[2] = {start, end};
  for (int i = 0; i < 2; ++i) {
    npurt::EventState& state = *events[i]->state;
    std::lock_guard<std::mutex> lock(state.mutex);
    if ((state.flags & ACL_EVENT_TIME_LINE) == 0) {
      return fail(ACL_ERROR_INVALID_PARAM,
                  "aclrtEventElapsedTime: both events need ACL_EVENT_TIME_LINE (torch: enable_timing=True)");
    }
    if (state.recorded == 0 || state.completed < state.recorded) {
      return fail(ACL_ERROR_RT_EVENT_NOT_COMPLETE,
                  "aclrtEventElapsedTime: both events must be recorded and completed: synchronize the end event first");
    }
    stamps[i] = state.timestampNs;
  }
  *ms = static_cast<float>(static_cast<double>(stamps[1] - stamps[0]) / 1e6);
  return ACL_SUCCESS;
}

}  // extern "C"
