// Profiling records: one per task while on, none while off, with correlation id,
// queuing thread, stream and ordered timestamps.
#include <sys/syscall.h>
#include <unistd.h>

#include <vector>

#include "expect.h"
#include "kernels.h"
#include "npurt/profiling.h"

namespace {

aclrtStream stream(uint32_t index) {
  aclrtStream s = nullptr;
  EXPECT_OK(aclrtGetStreamByIndex(0, index, &s));
  return s;
}

std::vector<npurtTaskRecord> takeAll() {
  EXPECT_OK(npurtProfilerFlush(10000));
  std::vector<npurtTaskRecord> records(npurtProfilerPendingRecords());
  size_t count = 0;
  EXPECT_OK(npurtProfilerTakeRecords(records.data(), records.size(), &count));
  EXPECT(count == records.size());
  return records;
}

void offByDefaultLeavesNoRecords() {
  EXPECT(npurtProfilerEnabled() == 0);
  aclrtStream s = stream(1);
  EXPECT_OK(launchSleep(s, 1));
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT(npurtProfilerPendingRecords() == 0);
}

void everyTaskKindLeavesOneRecord() {
  aclrtStream s = stream(2);
  void* dev = nullptr;
  EXPECT_OK(aclrtMalloc(&dev, 4096, 0));
  std::vector<char> host(4096, 1);
  aclrtEvent event = nullptr;
  EXPECT_OK(aclrtCreateEventWithFlag(&event, ACL_EVENT_TIME_LINE));

  npurtProfilerEnable(1);
  int64_t before = npurtProfilerNowNs();
  npurtProfilerPushCorrelationId(41);
  EXPECT_OK(aclrtMemcpyAsync(dev, 4096, host.data(), 4096, ACL_MEMCPY_HOST_TO_DEVICE, s));
  npurtProfilerPushCorrelationId(42);  // nested op: its tasks carry the inner id
  EXPECT_OK(launchSleep(s, 5));
  EXPECT_OK(aclrtMemsetAsync(dev, 4096, 0, 1024, s));
  npurtProfilerPopCorrelationId();
  EXPECT_OK(aclrtRecordEvent(event, s));
  EXPECT_OK(aclrtStreamWaitEvent(stream(3), event));
  npurtProfilerPopCorrelationId();
  EXPECT_OK(aclrtMemcpyAsync(host.data(), 4096, dev, 4096, ACL_MEMCPY_DEVICE_TO_HOST, s));
  npurtProfilerEnable(0);
  EXPECT_OK(launchSleep(s, 1));  // queued after disabling: no record
  EXPECT_OK(aclrtSynchronizeStream(s));
  EXPECT_OK(aclrtSynchronizeStream(stream(3)));
  int64_t after = npurtProfilerNowNs();

  std::vector<npurtTaskRecord> records = takeAll();
  EXPECT(records.size() == 6);
  struct Expected {
    npurtTaskKind kind;
    const char* name;
    uint64_t correlationId;
    uint32_t streamIndex;
  } expected[] = {
      {NPURT_TASK_MEMCPY, "Memcpy", 41, 2},     {NPURT_TASK_KERNEL, "sleep", 42, 2},
      {NPURT_TASK_MEMSET, "Memset", 42, 2},     {NPURT_TASK_EVENT_RECORD, "EventRecord", 41, 2},
      {NPURT_TASK_EVENT_WAIT, "EventWait", 41, 3}, {NPURT_TASK_MEMCPY, "Memcpy", 0, 2},
  };
  // Records arrive in completion order; match each expected task by (stream, order on stream).
  std::vector<npurtTaskRecord> onStream2, onStream3;
  for (const auto& r : records) (r.streamIndex == 2 ? onStream2 : onStream3).push_back(r);
  EXPECT(onStream2.size() == 5 && onStream3.size() == 1);
  for (size_t i = 0; i < 6; ++i) {
    const npurtTaskRecord& r = i == 4 ? onStream3[0] : onStream2[i < 4 ? i : i - 1];
    EXPECT(r.kind == expected[i].kind);
    EXPECT(std::strcmp(r.name, expected[i].name) == 0);
    EXPECT(r.correlationId == expected[i].correlationId);
    EXPECT(r.streamIndex == expected[i].streamIndex);
    EXPECT(r.deviceId == 0);
    EXPECT(r.pid == ::getpid());
    EXPECT(r.tid == static_cast<uint64_t>(::syscall(SYS_gettid)));
    EXPECT(r.status == ACL_SUCCESS);
    EXPECT(before <= r.enqueueNs && r.enqueueNs <= r.startNs && r.startNs <= r.endNs && r.endNs <= after);
  }
  // A stream runs its tasks in order: each starts after the previous ended.
  for (size_t i = 1; i < onStream2.size(); ++i) EXPECT(onStream2[i].startNs >= onStream2[i - 1].endNs);
  const npurtTaskRecord& kernel = onStream2[1];
  EXPECT(kernel.blockDim == 1 && kernel.endNs - kernel.startNs >= 5000000);
  EXPECT(onStream2[0].bytes == 4096 && onStream2[0].memcpyKind == ACL_MEMCPY_HOST_TO_DEVICE);
  EXPECT(onStream2[2].bytes == 1024 && onStream2[2].memcpyKind == -1);
  EXPECT(onStream2[4].memcpyKind == ACL_MEMCPY_DEVICE_TO_HOST);
  EXPECT(npurtProfilerDroppedRecords() == 0);
  EXPECT_OK(aclrtDestroyEvent(event));
  EXPECT_OK(aclrtFree(dev));
}

void failedKernelRecordsItsStatus() {
  aclrtStream s = stream(4);
  npurtProfilerEnable(1);
  EXPECT_OK(aclrtLaunchKernel(failingKernel, 2, nullptr, 0, "fails", s));
  npurtProfilerEnable(0);
  EXPECT(aclrtSynchronizeStream(s) == ACL_ERROR_RT_AICORE_EXCEPTION);
  std::vector<npurtTaskRecord> records = takeAll();
  EXPECT(records.size() == 1);
  EXPECT(records[0].status == ACL_ERROR_RT_AICORE_EXCEPTION && records[0].blockDim == 2);
}

void flushWaitsForPendingTasksAndTimesOut() {
  aclrtStream s = stream(5);
  npurtProfilerEnable(1);
  EXPECT_OK(launchSleep(s, 300));
  npurtProfilerEnable(0);
  EXPECT(npurtProfilerFlush(10) == ACL_ERROR_RT_STREAM_NOT_COMPLETE);
  EXPECT(contains(aclGetRecentErrMsg(), "still pending"));
  EXPECT_OK(npurtProfilerFlush(10000));
  EXPECT(takeAll().size() == 1);
  EXPECT_OK(aclrtSynchronizeStream(s));  // flushing consumed no task error
}

void syncMemcpyAndOutOfStreamTasksLeaveRecords() {
  void* dev = nullptr;
  EXPECT_OK(aclrtMalloc(&dev, 4096, 0));
  std::vector<char> host(4096, 1);
  EXPECT(npurtProfilerBeginTask(NPURT_TASK_COLLECTIVE, "hcom_allReduce_", stream(6), 64, -1) == nullptr);  // off
  npurtProfilerEnable(1);
  npurtProfilerPushCorrelationId(7);
  EXPECT_OK(aclrtMemcpy(dev, 4096, host.data(), 4096, ACL_MEMCPY_HOST_TO_DEVICE));
  npurtProfiledTask* task = npurtProfilerBeginTask(NPURT_TASK_COLLECTIVE, "hcom_allReduce_", stream(6), 64, -1);
  npurtProfilerPopCorrelationId();
  npurtProfilerEnable(0);
  EXPECT(task != nullptr);
  EXPECT(npurtProfilerFlush(10) == ACL_ERROR_RT_STREAM_NOT_COMPLETE);  // begun, not ended
  npurtProfilerTaskStarted(task);
  npurtProfilerTaskEnded(task, ACL_SUCCESS);
  std::vector<npurtTaskRecord> records = takeAll();
  EXPECT(records.size() == 2);
  EXPECT(records[0].kind == NPURT_TASK_MEMCPY && records[0].memcpyKind == ACL_MEMCPY_HOST_TO_DEVICE);
  EXPECT(records[0].bytes == 4096 && records[0].streamIndex == 0 && records[0].correlationId == 7);
  EXPECT(std::strcmp(records[0].name, "aclrtMemcpy") == 0);
  EXPECT(records[1].kind == NPURT_TASK_COLLECTIVE && std::strcmp(records[1].name, "hcom_allReduce_") == 0);
  EXPECT(records[1].streamIndex == 6 && records[1].correlationId == 7 && records[1].bytes == 64);
  for (const auto& r : records) EXPECT(r.enqueueNs <= r.startNs && r.startNs <= r.endNs);
  EXPECT_OK(aclrtFree(dev));
}

void takeRecordsChecksArguments() {
  size_t count = 7;
  EXPECT(npurtProfilerTakeRecords(nullptr, 0, nullptr) == ACL_ERROR_INVALID_PARAM);
  EXPECT(npurtProfilerTakeRecords(nullptr, 4, &count) == ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(npurtProfilerTakeRecords(nullptr, 0, &count));
  EXPECT(count == 0);
  npurtProfilerPopCorrelationId();  // popping an empty stack is harmless
}

}  // namespace

int main() {
  RUN(offByDefaultLeavesNoRecords);
  RUN(everyTaskKindLeavesOneRecord);
  RUN(failedKernelRecordsItsStatus);
  RUN(flushWaitsForPendingTasksAndTimesOut);
  RUN(syncMemcpyAndOutOfStreamTasksLeaveRecords);
  RUN(takeRecordsChecksArguments);
  return 0;
}
