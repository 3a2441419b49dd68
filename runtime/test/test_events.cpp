// Events: timestamps, query/synchronize, misuse.
#include "expect.h"
#include "kernels.h"

namespace {

aclrtStream stream(uint32_t index) {
  aclrtStream s = nullptr;
  EXPECT_OK(aclrtGetStreamByIndex(0, index, &s));
  return s;
}

aclrtEvent makeEvent(uint32_t flag) {
  aclrtEvent event = nullptr;
  EXPECT_OK(aclrtCreateEventWithFlag(&event, flag));
  return event;
}

void elapsedTimeCoversTheWork() {
  aclrtStream s = stream(1);
  aclrtEvent start = makeEvent(ACL_EVENT_TIME_LINE), end = makeEvent(ACL_EVENT_TIME_LINE);
  EXPECT_OK(aclrtRecordEvent(start, s));
  EXPECT_OK(launchSleep(s, 30));
  EXPECT_OK(aclrtRecordEvent(end, s));
  EXPECT_OK(aclrtSynchronizeEvent(end));
  float ms = 0;
  EXPECT_OK(aclrtEventElapsedTime(&ms, start, end));
  EXPECT(ms >= 29.0f && ms < 2000.0f);
  EXPECT_OK(aclrtDestroyEvent(start));
  EXPECT_OK(aclrtDestroyEvent(end));
}

void queryThenSynchronize() {
  aclrtStream s = stream(2);
  aclrtEvent event = makeEvent(ACL_EVENT_SYNC);
  int32_t complete = 0;
  EXPECT_OK(aclrtQueryEventStatus(event, &complete));
  EXPECT(complete == 1);  // never recorded: complete, as in CUDA
  EXPECT_OK(launchSleep(s, 200));
  EXPECT_OK(aclrtRecordEvent(event, s));
  EXPECT_OK(aclrtQueryEventStatus(event, &complete));
  EXPECT(complete == 0);
  EXPECT_OK(aclrtSynchronizeEvent(event));
  EXPECT_OK(aclrtQueryEventStatus(event, &complete));
  EXPECT(complete == 1);
  EXPECT_OK(aclrtDestroyEvent(event));
}

void elapsedTimeNeedsTimingAndCompletion() {
  aclrtStream s = stream(3);
  aclrtEvent plain = makeEvent(0), start = makeEvent(ACL_EVENT_TIME_LINE), end = makeEvent(ACL_EVENT_TIME_LINE);
  float ms = 0;
  EXPECT_OK(aclrtRecordEvent(plain, s));
  EXPECT_OK(aclrtRecordEvent(start, s));
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT(aclrtEventElapsedTime(&ms, plain, start) == ACL_ERROR_INVALID_PARAM);
  EXPECT(contains(aclGetRecentErrMsg(), "ACL_EVENT_TIME_LINE"));
  EXPECT(aclrtEventElapsedTime(&ms, start, end) == ACL_ERROR_RT_EVENT_NOT_COMPLETE);
  EXPECT_OK(launchSleep(s, 100));
  EXPECT_OK(aclrtRecordEvent(end, s));
  EXPECT(aclrtEventElapsedTime(&ms, start, end) == ACL_ERROR_RT_EVENT_NOT_COMPLETE);
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT_OK(aclrtEventElapsedTime(&ms, start, end));
  for (aclrtEvent e : {plain, start, end}) EXPECT_OK(aclrtDestroyEvent(e));
}

void destroyWhileRecordIsQueued() {
  aclrtStream s = stream(4);
  aclrtEvent event = makeEvent(ACL_EVENT_TIME_LINE);
  EXPECT_OK(launchSleep(s, 50));
  EXPECT_OK(aclrtRecordEvent(event, s));
  EXPECT_OK(aclrtDestroyEvent(event));
  EXPECT_OK(aclrtSynchronizeStream(s));
}

void rerecordTracksLatestWork() {
  aclrtStream s = stream(5);
  aclrtEvent event = makeEvent(0);
  EXPECT_OK(aclrtRecordEvent(event, s));
  EXPECT_OK(aclrtSynchronizeEvent(event));
  EXPECT_OK(launchSleep(s, 150));
  EXPECT_OK(aclrtRecordEvent(event, s));
  int32_t complete = 1;
  EXPECT_OK(aclrtQueryEventStatus(event, &complete));
  EXPECT(complete == 0);
  EXPECT_OK(aclrtSynchronizeEvent(event));
  EXPECT_OK(aclrtDestroyEvent(event));
}

}  // namespace

int main() {
  RUN(elapsedTimeCoversTheWork);
  RUN(queryThenSynchronize);
  RUN(elapsedTimeNeedsTimingAndCompletion);
  RUN(destroyWhileRecordIsQueued);
  RUN(rerecordTracksLatestWork);
  return 0;
}
