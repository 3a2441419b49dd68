// ASCEND_LAUNCH_BLOCKING=1 (read once, so set before the first runtime call).
#include "expect.h"
#include "kernels.h"

namespace {

void launchWaitsForTheKernel() {
  EXPECT(aclrtLaunchBlocking() == 1);
  aclrtStream s = nullptr;
  EXPECT_OK(aclrtGetStreamByIndex(0, 1, &s));
  auto start = std::chrono::steady_clock::now();
  EXPECT_OK(launchSleep(s, 150));
  EXPECT(secondsSince(start) >= 0.15);
  int32_t done = 0;
  EXPECT_OK(aclrtStreamQuery(s, &done));
  EXPECT(done == 1);
}

void kernelErrorReturnedByLaunch() {
  EXPECT(aclrtLaunchKernel(failingKernel, 2, nullptr, 0, "blocking_fail", nullptr) == ACL_ERROR_RT_AICORE_EXCEPTION);
  EXPECT(contains(aclGetRecentErrMsg(), "blocking_fail"));
  EXPECT_OK(aclrtSynchronizeStream(nullptr));
}

void eventsStillTime() {
  aclrtEvent start = nullptr, end = nullptr;
  EXPECT_OK(aclrtCreateEventWithFlag(&start, ACL_EVENT_TIME_LINE));
  EXPECT_OK(aclrtCreateEventWithFlag(&end, ACL_EVENT_TIME_LINE));
  EXPECT_OK(aclrtRecordEvent(start, nullptr));
  EXPECT_OK(launchSleep(nullptr, 20));
  EXPECT_OK(aclrtRecordEvent(end, nullptr));
  float ms = 0;
  EXPECT_OK(aclrtEventElapsedTime(&ms, start, end));
  EXPECT(ms >= 19.0f);
}

}  // namespace

int main() {
  setenv("ASCEND_LAUNCH_BLOCKING", "1", 1);
  RUN(launchWaitsForTheKernel);
  RUN(kernelErrorReturnedByLaunch);
  RUN(eventsStillTime);
  return 0;
}
