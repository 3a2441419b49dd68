// stop/restart of a device, the operator execution timeout, sync-launch streams, utilization.
#include <atomic>
#include <chrono>
#include <thread>

#include "expect.h"
#include "kernels.h"
#include "npurt/device_control.h"

namespace {

aclrtStream stream(int32_t device, uint32_t index) {
  aclrtStream s = nullptr;
  EXPECT_OK(aclrtGetStreamByIndex(device, index, &s));
  return s;
}

void stopDropsQueuedWorkAndRestartRecovers() {
  aclrtStream s = stream(1, 1);
  std::atomic<int> slots[4] = {};
  std::atomic<int>* ptr = slots;
  EXPECT_OK(launchSleep(s, 50));  // running when the device stops: it finishes
  for (int i = 0; i < 3; ++i) EXPECT_OK(aclrtLaunchKernel(markBlockKernel, 4, &ptr, sizeof(ptr), "mark", s));
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_OK(npurtDeviceStop(1));
  EXPECT(npurtDeviceStopped(1) == 1 && npurtDeviceStopped(0) == 0);
  EXPECT(aclrtSynchronizeStream(s) == ACL_ERROR_RT_DEVICE_TASK_ABORT);
  EXPECT(contains(aclGetRecentErrMsg(), "restart_device(1)"));
  for (auto& slot : slots) EXPECT(slot.load() == 0);  // the queued launches never ran
  EXPECT(launchSleep(s, 1) == ACL_ERROR_RT_DEVICE_TASK_ABORT);  // new work is refused
  EXPECT_OK(launchSleep(stream(0, 1), 1));                       // other devices are unaffected
  EXPECT_OK(aclrtSynchronizeStream(stream(0, 1)));
  EXPECT_OK(npurtDeviceRestart(1));
  EXPECT_OK(aclrtLaunchKernel(markBlockKernel, 4, &ptr, sizeof(ptr), "mark", s));
  EXPECT_OK(aclrtSynchronizeStream(s));
  for (auto& slot : slots) EXPECT(slot.load() == 1);
  EXPECT(npurtDeviceStop(99) != ACL_SUCCESS);
}

void kernelPastTheTimeoutFailsAtTheNextSync() {
  aclrtStream s = stream(0, 2);
  EXPECT_OK(aclrtSetOpExecuteTimeOutWithMs(20));
  EXPECT(npurtOpExecuteTimeoutMs() == 20);
  EXPECT_OK(launchSleep(s, 5));  // within the limit
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT_OK(launchSleep(s, 60));
  EXPECT(aclrtSynchronizeStream(s) == ACL_ERROR_RT_AICORE_TIMEOUT);
  EXPECT(contains(aclGetRecentErrMsg(), "operator execution timeout of 20 ms"));
  EXPECT_OK(aclrtSetOpExecuteTimeOutWithMs(0));  // no limit again
  EXPECT_OK(launchSleep(s, 60));
  EXPECT_OK(aclrtSynchronizeStream(s));
}

void syncLaunchStreamRunsTasksInTheCaller() {
  aclrtStream s = stream(0, ACL_SYNC_LAUNCH_STREAM_BASE);
  auto start = std::chrono::steady_clock::now();
  EXPECT_OK(launchSleep(s, 30));
  EXPECT(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(30));  // done on return
  int32_t done = 0;
  EXPECT_OK(aclrtStreamQuery(s, &done));
  EXPECT(done == 1);
  EXPECT(aclrtLaunchKernel(failingKernel, 2, nullptr, 0, "fails", s) == ACL_ERROR_RT_AICORE_EXCEPTION);
}

void utilizationIsTheBusyShareOfTheWindow() {
  int32_t percent = -1;
  EXPECT_OK(npurtDeviceUtilization(2, &percent));  // starts the busy log
  std::this_thread::sleep_for(std::chrono::milliseconds(NPURT_UTILIZATION_WINDOW_MS + 20));
  EXPECT_OK(npurtDeviceUtilization(2, &percent));
  EXPECT(percent == 0);
  aclrtStream s = stream(2, 1);
  EXPECT_OK(launchSleep(s, NPURT_UTILIZATION_WINDOW_MS + 50));
  std::this_thread::sleep_for(std::chrono::milliseconds(NPURT_UTILIZATION_WINDOW_MS + 20));
  EXPECT_OK(npurtDeviceUtilization(2, &percent));  // still running: the whole window was busy
  EXPECT(percent >= 95);
  EXPECT_OK(aclrtSynchronizeStream(s));
  std::this_thread::sleep_for(std::chrono::milliseconds(NPURT_UTILIZATION_WINDOW_MS + 20));
  EXPECT_OK(npurtDeviceUtilization(2, &percent));
  EXPECT(percent == 0);
  EXPECT(npurtDeviceUtilization(2, nullptr) == ACL_ERROR_INVALID_PARAM);
}

}  // namespace

int main() {
  RUN(stopDropsQueuedWorkAndRestartRecovers);
  RUN(kernelPastTheTimeoutFailsAtTheNextSync);
  RUN(syncLaunchStreamRunsTasksInTheCaller);
  RUN(utilizationIsTheBusyShareOfTheWindow);
  return 0;
}
