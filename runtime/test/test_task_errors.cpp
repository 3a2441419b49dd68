// A failing task: its error waits for the next synchronizing call, then the stream works again.
#include <atomic>

#include "expect.h"
#include "kernels.h"

namespace {

aclrtStream stream(uint32_t index) {
  aclrtStream s = nullptr;
  EXPECT_OK(aclrtGetStreamByIndex(0, index, &s));
  return s;
}

std::atomic<int> ranAfterFailure{0};
int32_t markRan(void*) {
  ranAfterFailure = 1;
  return 0;
}
int32_t failingHostFunc(void*) { return 3; }

void kernelErrorKeptUntilSyncThenStreamUsable() {
  aclrtStream s = stream(1);
  EXPECT_OK(aclrtLaunchKernel(failingKernel, 4, nullptr, 0, "broken_add", s));
  EXPECT_OK(aclrtLaunchHostFunc(s, markRan, nullptr));  // queued behind the failure: still accepted
  EXPECT(aclrtSynchronizeStream(s) == ACL_ERROR_RT_AICORE_EXCEPTION);
  EXPECT(contains(aclGetRecentErrMsg(), "broken_add"));
  EXPECT(contains(aclGetRecentErrMsg(), "block 1"));
  EXPECT(ranAfterFailure == 1);
  EXPECT_OK(aclrtSynchronizeStream(s));  // reported once
  EXPECT_OK(launchSleep(s, 1));
  EXPECT_OK(aclrtSynchronizeStream(s));
}

void hostFuncErrorKeptUntilSync() {
  aclrtStream s = stream(2);
  EXPECT_OK(aclrtLaunchHostFunc(s, failingHostFunc, nullptr));
  EXPECT(aclrtSynchronizeStream(s) == ACL_ERROR_RT_INTERNAL_ERROR);
  EXPECT(contains(aclGetRecentErrMsg(), "code 3"));
  EXPECT_OK(aclrtSynchronizeStream(s));
}

void firstErrorWins() {
  aclrtStream s = stream(3);
  EXPECT_OK(aclrtLaunchKernel(failingKernel, 2, nullptr, 0, "first", s));
  EXPECT_OK(aclrtLaunchKernel(failingKernel, 2, nullptr, 0, "second", s));
  EXPECT(aclrtSynchronizeStream(s) == ACL_ERROR_RT_AICORE_EXCEPTION);
  EXPECT(contains(aclGetRecentErrMsg(), "first"));
  EXPECT_OK(aclrtSynchronizeStream(s));
}

void deviceSyncReportsPoolStreamError() {
  EXPECT_OK(aclrtLaunchKernel(failingKernel, 2, nullptr, 0, "pool_kernel", stream(40)));
  EXPECT(aclrtSynchronizeDevice() == ACL_ERROR_RT_AICORE_EXCEPTION);
  EXPECT(contains(aclGetRecentErrMsg(), "pool_kernel"));
  EXPECT_OK(aclrtSynchronizeDevice());
}

}  // namespace

int main() {
  RUN(kernelErrorKeptUntilSyncThenStreamUsable);
  RUN(hostFuncErrorKeptUntilSync);
  RUN(firstErrorWins);
  RUN(deviceSyncReportsPoolStreamError);
  return 0;
}
