// Profiling records: the wrapper every stream task gets while profiling is on, and the
// buffer the records wait in until the profiler takes them.
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "error.h"
#include "npurt/device_control.h"
#include "profiling_hooks.h"

namespace npurt {

std::atomic<bool> profilingOn{false};

namespace {

// About 100 MB of records: a long trace nobody takes must not exhaust host memory.
constexpr size_t kMaxRecords = size_t(1) << 20;

struct RecordBuffer {
  std::mutex mutex;
  std::condition_variable drained;  // inFlight reached 0
  std::deque<npurtTaskRecord> records;
  uint64_t inFlight = 0;  // profiled tasks queued but not finished
  uint64_t dropped = 0;
};

// Leaked on purpose: stream workers may finish a profiled task during static destruction.
RecordBuffer& buffer() {
  static RecordBuffer* records = new RecordBuffer();
  return *records;
}

// Kernel symbols live as long as the process, so a record can point at its name.
const char* intern(const char* name) {
  static std::mutex mutex;
  static auto* names = new std::unordered_set<std::string>();
  std::lock_guard<std::mutex> lock(mutex);
  return names->emplace(name).first->c_str();
}

const char* kindName(npurtTaskKind kind) {
  switch (kind) {
    case NPURT_TASK_KERNEL: return "Kernel";
    case NPURT_TASK_MEMCPY: return "Memcpy";
    case NPURT_TASK_MEMSET: return "Memset";
    case NPURT_TASK_EVENT_RECORD: return "EventRecord";
    case NPURT_TASK_EVENT_WAIT: return "EventWait";
    case NPURT_TASK_HOST_FUNC: return "HostFunc";
    case NPURT_TASK_COLLECTIVE: return "Collective";
  }
  return "Task";
}

thread_local std::vector<uint64_t> correlationIds;

uint64_t threadId() {
  thread_local uint64_t tid = static_cast<uint64_t>(::syscall(SYS_gettid));
  return tid;
}

void store(const npurtTaskRecord& record) {
  RecordBuffer& buf = buffer();
  bool last;
  {
    std::lock_guard<std::mutex> lock(buf.mutex);
    if (buf.records.size() < kMaxRecords) {
      buf.records.push_back(record);
    } else {
      ++buf.dropped;
    }
    last = --buf.inFlight == 0;
  }
  if (last) buf.drained.notify_all();
}

// The queuing side of a record: what it is, where, for which host op, queued when; counts
// it as in flight until store().
npurtTaskRecord begin(const aclrtStreamImpl* stream, const TaskInfo& info) {
  npurtTaskRecord record{};
  record.kind = info.kind;
  record.name = info.name != nullptr ? intern(info.name) : kindName(info.kind);
  record.deviceId = stream->device;
  record.streamIndex = stream->index;
  record.correlationId = correlationIds.empty() ? 0 : correlationIds.back();
  record.pid = static_cast<int32_t>(::getpid());
  record.tid = threadId();
  record.bytes = info.bytes;
  record.memcpyKind = info.memcpyKind;
  record.blockDim = info.blockDim;
  {
    RecordBuffer& buf = buffer();
    std::lock_guard<std::mutex> lock(buf.mutex);
    ++buf.inFlight;
  }
  record.enqueueNs = npurtProfilerNowNs();
  return record;
}

}  // namespace

namespace {

// A profiled task's record, stored once: when the task ran, or when a stopped device dropped
// it unrun (then with ACL_ERROR_RT_DEVICE_TASK_ABORT), so flushing never waits for it.
struct PendingRecord {
  npurtTaskRecord record;
  bool stored = false;

  explicit PendingRecord(const npurtTaskRecord& r) : record(r) {}
  PendingRecord(const PendingRecord&) = delete;
  PendingRecord& operator=(const PendingRecord&) = delete;
  ~PendingRecord() {
    if (stored) return;
    record.startNs = record.endNs = npurtProfilerNowNs();
    record.status = ACL_ERROR_RT_DEVICE_TASK_ABORT;
    store(record);
  }
};

}  // namespace

Task profiled(const aclrtStreamImpl* stream, const TaskInfo& info, Task task) {
  auto pending = std::make_shared<PendingRecord>(begin(stream, info));
  return [pending, task = std::move(task)]() {
    npurtTaskRecord& record = pending->record;
    record.startNs = npurtProfilerNowNs();
    record.status = task();
    record.endNs = npurtProfilerNowNs();
    pending->stored = true;
    store(record);
    return record.status;
  };
}

}  // namespace npurt

using npurt::fail;

struct npurtProfiledTask {
  npurtTaskRecord record;
};

extern "C" {

npurtProfiledTask* npurtProfilerBeginTask(npurtTaskKind kind, const char* name, aclrtStream stream,
                                          uint64_t bytes, int32_t memcpyKind) {
  if (!npurt::profiling()) return nullptr;
  if (npurt::resolveStream(stream, &stream, "npurtProfilerBeginTask") != ACL_SUCCESS) return nullptr;
  npurt::TaskInfo info{kind, name, bytes, memcpyKind};
  return new npurtProfiledTask{npurt::begin(stream, info)};
}

void npurtProfilerTaskStarted(npurtProfiledTask* task) {
  if (task != nullptr) task->record.startNs = npurtProfilerNowNs();
}

void npurtProfilerTaskEnded(npurtProfiledTask* task, aclError status) {
  if (task == nullptr) return;
  task->record.endNs = npurtProfilerNowNs();
  if (task->record.startNs == 0) task->record.startNs = task->record.endNs;
  task->record.status = status;
  npurt::store(task->record);
  delete task;
}

int64_t npurtProfilerNowNs(void) {
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

void npurtProfilerEnable(int32_t enable) { npurt::profilingOn.store(enable != 0); }

int32_t npurtProfilerEnabled(void) { return npurt::profiling() ? 1 : 0; }

void npurtProfilerPushCorrelationId(uint64_t id) { npurt::correlationIds.push_back(id); }

void npurtProfilerPopCorrelationId(void) {
  if (!npurt::correlationIds.empty()) npurt::correlationIds.pop_back();
}

aclError npurtProfilerFlush(int64_t timeoutMs) {
  npurt::RecordBuffer& buf = npurt::buffer();
  std::unique_lock<std::mutex> lock(buf.mutex);
  bool done = buf.drained.wait_for(lock, std::chrono::milliseconds(timeoutMs < 0 ? 0 : timeoutMs),
                                   [&] { return buf.inFlight == 0; });
  if (done) return ACL_SUCCESS;
  return fail(ACL_ERROR_RT_STREAM_NOT_COMPLETE, "npurtProfilerFlush: " + std::to_string(buf.inFlight) +
                                                    " profiled tasks still pending after " +
                                                    std::to_string(timeoutMs) + " ms");
}

aclError npurtProfilerTakeRecords(npurtTaskRecord* out, size_t capacity, size_t* count) {
  if (count == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "npurtProfilerTakeRecords: count is null");
  if (out == nullptr && capacity > 0) {
    return fail(ACL_ERROR_INVALID_PARAM, "npurtProfilerTakeRecords: out is null but capacity is " +
                                             std::to_string(capacity));
  }
  npurt::RecordBuffer& buf = npurt::buffer();
  std::lock_guard<std::mutex> lock(buf.mutex);
  size_t n = std::min(capacity, buf.records.size());
  for (size_t i = 0; i < n; ++i) {
    out[i] = buf.records.front();
    buf.records.pop_front();
  }
  *count = n;
  return ACL_SUCCESS;
}

size_t npurtProfilerPendingRecords(void) {
  npurt::RecordBuffer& buf = npurt::buffer();
  std::lock_guard<std::mutex> lock(buf.mutex);
  return buf.records.size();
}

uint64_t npurtProfilerDroppedRecords(void) {
  npurt::RecordBuffer& buf = npurt::buffer();
  std::lock_guard<std::mutex> lock(buf.mutex);
  return buf.dropped;
}

}  // extern "C"
