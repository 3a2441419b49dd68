// Stream capture (npurt/acl_mdl.h): recorded not run, replayed in order, errors and modes.
#include <atomic>
#include <thread>
#include <vector>

#include "expect.h"
#include "kernels.h"
#include "npurt/acl_mdl.h"

namespace {

aclrtStream stream(uint32_t index) {
  aclrtStream s = nullptr;
  EXPECT_OK(aclrtGetStreamByIndex(0, index, &s));
  return s;
}

// args: int64* counter, int64 amount: adds amount to the counter (one block).
int32_t addKernel(const void* args, uint32_t, uint32_t) {
  int64_t* counter;
  int64_t amount;
  std::memcpy(&counter, args, sizeof(counter));
  std::memcpy(&amount, static_cast<const char*>(args) + 8, sizeof(amount));
  *counter += amount;
  return 0;
}

aclError launchAdd(aclrtStream s, int64_t* counter, uint64_t amount) {
  uint64_t args[2] = {reinterpret_cast<uint64_t>(counter), amount};
  return aclrtLaunchKernel(addKernel, 1, args, sizeof(args), "add", s);
}

int64_t* deviceCounter() {
  void* ptr = nullptr;
  EXPECT_OK(aclrtMalloc(&ptr, sizeof(int64_t), 0));
  *static_cast<int64_t*>(ptr) = 0;
  return static_cast<int64_t*>(ptr);
}

void launchesAreRecordedNotRunAndReplayInOrder() {
  aclrtStream s = stream(3);
  int64_t* counter = deviceCounter();
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  aclmdlRICaptureStatus status;
  EXPECT_OK(aclmdlRICaptureGetInfo(s, &status, nullptr));
  EXPECT(status == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE);
  EXPECT_OK(launchAdd(s, counter, 1));
  EXPECT_OK(aclrtMemsetAsync(counter, 8, 0, 8, s));  // the replay resets, then adds 5
  EXPECT_OK(launchAdd(s, counter, 5));
  aclmdlRI graph = nullptr;
  EXPECT_OK(aclmdlRICaptureEnd(s, &graph));
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT(*counter == 0);
  size_t tasks = 0;
  EXPECT_OK(npurtGraphTaskCount(graph, &tasks));
  EXPECT(tasks == 3);
  *counter = 100;
  EXPECT_OK(aclmdlRIExecuteAsync(graph, s));
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT(*counter == 5);
  EXPECT_OK(aclmdlRIExecuteAsync(graph, stream(0)));  // replays anywhere on the device
  EXPECT_OK(aclrtSynchronizeStream(stream(0)));
  EXPECT(*counter == 5);
  EXPECT_OK(aclmdlRICaptureGetInfo(s, &status, nullptr));
  EXPECT(status == ACL_MODEL_RI_CAPTURE_STATUS_NONE);
  EXPECT_OK(aclmdlRIDestroy(graph));
  EXPECT(aclmdlRIDestroy(graph) == ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclrtFree(counter));
}

void defaultStreamCannotBeCaptured() {
  EXPECT(aclmdlRICaptureBegin(stream(0), ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == ACL_ERROR_RT_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT(contains(aclGetRecentErrMsg(), "non-default stream"));
  EXPECT(aclmdlRICaptureBegin(stream(3), static_cast<aclmdlRICaptureMode>(7)) == ACL_ERROR_INVALID_PARAM);
  aclmdlRI graph = nullptr;
  EXPECT(aclmdlRICaptureEnd(stream(3), &graph) == ACL_ERROR_RT_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT(contains(aclGetRecentErrMsg(), "not capturing"));
}

void synchronizingTheCaptureInvalidatesItAndLeavesTheStreamUsable() {
  aclrtStream s = stream(4);
  int64_t* counter = deviceCounter();
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_RELAXED));
  EXPECT_OK(launchAdd(s, counter, 1));
  EXPECT(aclrtSynchronizeStream(s) == ACL_ERROR_RT_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT(contains(aclGetRecentErrMsg(), "operation not permitted when stream is capturing"));
  EXPECT(launchAdd(s, counter, 1) == ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);
  aclmdlRICaptureStatus status;
  EXPECT_OK(aclmdlRICaptureGetInfo(s, &status, nullptr));
  EXPECT(status == ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED);
  aclmdlRI graph = nullptr;
  EXPECT(aclmdlRICaptureEnd(s, &graph) == ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);
  EXPECT(graph == nullptr);
  EXPECT(contains(aclGetRecentErrMsg(), "previous error during capture"));
  EXPECT_OK(launchAdd(s, counter, 2));
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT(*counter == 2);
  EXPECT_OK(aclrtFree(counter));
}

void pageableCopiesCannotBeCaptured() {
  aclrtStream s = stream(4);
  int64_t* counter = deviceCounter();
  int64_t host = 0;
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT(aclrtMemcpyAsync(&host, 8, counter, 8, ACL_MEMCPY_DEVICE_TO_HOST, s) ==
         ACL_ERROR_RT_STREAM_CAPTURE_UNSUPPORTED);
  aclmdlRI graph = nullptr;
  EXPECT(aclmdlRICaptureEnd(s, &graph) == ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);
  void* pinned = nullptr;
  EXPECT_OK(aclrtMallocHost(&pinned, 8));
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_OK(aclrtMemcpyAsync(pinned, 8, counter, 8, ACL_MEMCPY_DEVICE_TO_HOST, s));
  EXPECT_OK(aclmdlRICaptureEnd(s, &graph));
  *counter = 42;
  EXPECT_OK(aclmdlRIExecuteAsync(graph, s));
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT(*static_cast<int64_t*>(pinned) == 42);
  EXPECT_OK(aclmdlRIDestroy(graph));
  EXPECT_OK(aclrtFreeHost(pinned));
  EXPECT_OK(aclrtFree(counter));
}

void captureModesDecideWhichThreadsMaySynchronize() {
  aclrtStream s = stream(5);
  for (aclmdlRICaptureMode mode : {ACL_MODEL_RI_CAPTURE_MODE_GLOBAL, ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL,
                                   ACL_MODEL_RI_CAPTURE_MODE_RELAXED}) {
    EXPECT_OK(aclmdlRICaptureBegin(s, mode));
    aclError other = ACL_SUCCESS;
    std::thread([&] { other = aclrtSynchronizeStream(stream(6)); }).join();
    aclError own = aclrtSynchronizeStream(stream(6));
    aclmdlRI graph = nullptr;
    aclError end = aclmdlRICaptureEnd(s, &graph);
    if (mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) {
      EXPECT(other == ACL_ERROR_RT_STREAM_CAPTURE_UNSUPPORTED && own == ACL_ERROR_RT_STREAM_CAPTURE_UNSUPPORTED);
      EXPECT(end == ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);
    } else if (mode == ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL) {
      EXPECT(other == ACL_SUCCESS && own == ACL_ERROR_RT_STREAM_CAPTURE_UNSUPPORTED);
      EXPECT(end == ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);
    } else {
      EXPECT(other == ACL_SUCCESS && own == ACL_SUCCESS);
      EXPECT_OK(end);
      EXPECT_OK(aclmdlRIDestroy(graph));
    }
  }
  // A thread in relaxed mode may synchronize during a global capture.
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  aclmdlRICaptureMode mode = ACL_MODEL_RI_CAPTURE_MODE_RELAXED;
  EXPECT_OK(aclmdlRICaptureThreadExchangeMode(&mode));
  EXPECT(mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL);
  EXPECT_OK(aclrtSynchronizeStream(stream(6)));
  EXPECT_OK(aclmdlRICaptureThreadExchangeMode(&mode));
  aclmdlRI graph = nullptr;
  EXPECT_OK(aclmdlRICaptureEnd(s, &graph));
  EXPECT_OK(aclmdlRIDestroy(graph));
}

void parametersArePatchedAtEachReplay() {
  aclrtStream s = stream(7);
  int64_t* counter = deviceCounter();
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  uint64_t placeholder = 0;
  EXPECT_OK(npurtCaptureParam(s, 0, 3, &placeholder));
  EXPECT_OK(launchAdd(s, counter, placeholder));
  aclmdlRI graph = nullptr;
  EXPECT_OK(aclmdlRICaptureEnd(s, &graph));
  for (uint64_t base : {10, 20}) {
    EXPECT_OK(npurtGraphSetParam(graph, 0, base));
    EXPECT_OK(aclmdlRIExecuteAsync(graph, s));
  }
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT(*counter == 13 + 23);
  EXPECT(npurtGraphSetParam(graph, 1, 0) == ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclmdlRIDestroy(graph));
  EXPECT_OK(aclrtFree(counter));
}

std::atomic<int> hostRuns{0};
std::atomic<int> hostReleases{0};

void ownedHostFunctionsRunAtEveryReplayAndAreReleasedWithTheGraph() {
  aclrtStream s = stream(8);
  auto run = [](void*) -> int32_t { return ++hostRuns, 0; };
  auto release = [](void*) { ++hostReleases; };
  EXPECT_OK(npurtLaunchHostFuncOwned(s, run, nullptr, release));
  EXPECT_OK(aclrtSynchronizeStream(s));
  for (int i = 0; i < 1000 && hostReleases != 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT(hostRuns == 1 && hostReleases == 1);
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_OK(npurtLaunchHostFuncOwned(s, run, nullptr, release));
  aclmdlRI graph = nullptr;
  EXPECT_OK(aclmdlRICaptureEnd(s, &graph));
  EXPECT(hostRuns == 1);
  for (int i = 0; i < 3; ++i) EXPECT_OK(aclmdlRIExecuteAsync(graph, s));
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT(hostRuns == 4);
  EXPECT_OK(aclmdlRIDestroy(graph));
  // The last reference may be a replayed task the worker destroys just after it counted as finished.
  for (int i = 0; i < 1000 && hostReleases != 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT(hostReleases == 2);
}

void aStreamWaitingOnCapturedWorkJoinsTheCapture() {
  aclrtStream origin = stream(9);
  aclrtStream side = stream(10);
  int64_t* counter = deviceCounter();
  aclrtEvent fork = nullptr, join = nullptr;
  EXPECT_OK(aclrtCreateEventWithFlag(&fork, 0));
  EXPECT_OK(aclrtCreateEventWithFlag(&join, 0));
  EXPECT_OK(aclmdlRICaptureBegin(origin, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_OK(launchAdd(origin, counter, 1));
  EXPECT_OK(aclrtRecordEvent(fork, origin));
  EXPECT_OK(aclrtStreamWaitEvent(side, fork));
  aclmdlRICaptureStatus status;
  EXPECT_OK(aclmdlRICaptureGetInfo(side, &status, nullptr));
  EXPECT(status == ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE);
  EXPECT_OK(launchAdd(side, counter, 10));
  EXPECT_OK(aclrtRecordEvent(join, side));
  EXPECT_OK(aclrtStreamWaitEvent(origin, join));
  EXPECT(aclrtSynchronizeEvent(join) == ACL_ERROR_RT_STREAM_CAPTURE_UNSUPPORTED);
  aclmdlRI graph = nullptr;
  EXPECT(aclmdlRICaptureEnd(origin, &graph) == ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED);
  EXPECT_OK(aclmdlRICaptureGetInfo(side, &status, nullptr));
  EXPECT(status == ACL_MODEL_RI_CAPTURE_STATUS_NONE);
  EXPECT_OK(aclrtSynchronizeStream(side));  // nothing of the capture ran on it
  EXPECT(*counter == 0);

  EXPECT_OK(aclmdlRICaptureBegin(origin, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_OK(aclrtRecordEvent(fork, origin));
  EXPECT_OK(aclrtStreamWaitEvent(side, fork));
  EXPECT_OK(launchAdd(side, counter, 10));
  EXPECT_OK(aclrtRecordEvent(join, side));
  EXPECT_OK(aclrtStreamWaitEvent(origin, join));
  EXPECT_OK(launchAdd(origin, counter, 1));
  EXPECT_OK(aclmdlRICaptureEnd(origin, &graph));
  EXPECT(*counter == 0);
  EXPECT_OK(aclmdlRIExecuteAsync(graph, origin));
  EXPECT_OK(aclrtSynchronizeStream(origin));
  EXPECT(*counter == 11);
  EXPECT_OK(aclrtDestroyEvent(fork));  // a graph outliving its events skips them
  EXPECT_OK(aclmdlRIExecuteAsync(graph, origin));
  EXPECT_OK(aclrtSynchronizeStream(origin));
  EXPECT(*counter == 22);
  EXPECT_OK(aclmdlRIDestroy(graph));
  EXPECT_OK(aclrtDestroyEvent(join));
  EXPECT_OK(aclrtFree(counter));
}

void replayIntoAnotherCaptureNestsTheGraph() {
  aclrtStream s = stream(11);
  int64_t* counter = deviceCounter();
  aclmdlRI inner = nullptr, outer = nullptr;
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_OK(launchAdd(s, counter, 2));
  EXPECT_OK(aclmdlRICaptureEnd(s, &inner));
  EXPECT_OK(aclmdlRICaptureBegin(s, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL));
  EXPECT_OK(aclmdlRIExecuteAsync(inner, s));
  EXPECT_OK(aclmdlRIExecuteAsync(inner, s));
  EXPECT_OK(aclmdlRICaptureEnd(s, &outer));
  EXPECT(*counter == 0);
  EXPECT_OK(aclmdlRIExecuteAsync(outer, s));
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT(*counter == 4);
  EXPECT_OK(aclmdlRIDestroy(inner));
  EXPECT_OK(aclmdlRIDestroy(outer));
  EXPECT_OK(aclrtFree(counter));
}

}  // namespace

int main() {
  RUN(launchesAreRecordedNotRunAndReplayInOrder);
  RUN(defaultStreamCannotBeCaptured);
  RUN(synchronizingTheCaptureInvalidatesItAndLeavesTheStreamUsable);
  RUN(pageableCopiesCannotBeCaptured);
  RUN(captureModesDecideWhichThreadsMaySynchronize);
  RUN(parametersArePatchedAtEachReplay);
  RUN(ownedHostFunctionsRunAtEveryReplayAndAreReleasedWithTheGraph);
  RUN(aStreamWaitingOnCapturedWorkJoinsTheCapture);
  RUN(replayIntoAnotherCaptureNestsTheGraph);
  return 0;
}
