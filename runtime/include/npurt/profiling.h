// Profiling records of stream tasks: what ran, on which stream, for which host op, and when.
//
// Off by default; while off, queuing a task costs one relaxed atomic load more. While on,
// every task queued (kernel launch, memcpy, memset, event record/wait, host function), every
// synchronous aclrtMemcpy and every collective yields one record: the correlation id the queuing thread had pushed (the host op that
// queued it, 0 if none), that thread's pid/tid, the enqueue time, and the start and end
// of the task on the stream's worker. Times are nanoseconds of CLOCK_REALTIME, the clock
// torch.profiler's CPU events and Kineto's capture window use, so device records line up
// with host ops without conversion.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "npurt/acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum npurtTaskKind {
  NPURT_TASK_KERNEL = 0,
  NPURT_TASK_MEMCPY = 1,
  NPURT_TASK_MEMSET = 2,
  NPURT_TASK_EVENT_RECORD = 3,
  NPURT_TASK_EVENT_WAIT = 4,
  NPURT_TASK_HOST_FUNC = 5,  // CPU fallback work, format conversions
  NPURT_TASK_COLLECTIVE = 6,  // an hccl collective, run by the transport for a stream
} npurtTaskKind;

typedef struct npurtTaskRecord {
  npurtTaskKind kind;
  const char* name;        // kernel symbol, or the task kind's name; valid for the process's life
  int32_t deviceId;
  uint32_t streamIndex;
  uint64_t correlationId;  // innermost id pushed on the queuing thread; 0 if none
  int32_t pid;
  uint64_t tid;            // the queuing thread's kernel thread id (gettid)
  int64_t enqueueNs;
  int64_t startNs;
  int64_t endNs;
  uint64_t bytes;          // memcpy / memset size, 0 otherwise
  int32_t memcpyKind;      // aclrtMemcpyKind for NPURT_TASK_MEMCPY, -1 otherwise
  uint32_t blockDim;       // kernel launches, 0 otherwise
  aclError status;         // the task's return code
} npurtTaskRecord;

// The profiling clock (CLOCK_REALTIME, ns).
int64_t npurtProfilerNowNs(void);

// Turns recording on or off for tasks queued from now on. Turning it on does not clear
// records not yet taken.
void npurtProfilerEnable(int32_t enable);
int32_t npurtProfilerEnabled(void);

// Correlation ids of the calling thread, a stack: tasks it queues carry the innermost.
void npurtProfilerPushCorrelationId(uint64_t id);
void npurtProfilerPopCorrelationId(void);

// Waits until every recorded task queued so far has finished, at most timeoutMs.
// ACL_ERROR_RT_STREAM_NOT_COMPLETE if some are still pending then (e.g. a stream waits
// on an event that is never recorded). Does not consume task errors.
aclError npurtProfilerFlush(int64_t timeoutMs);

// Tasks that do not run on a stream worker: a collective, which the transport runs on its
// own threads for a stream, and a synchronous aclrtMemcpy, which runs in the caller. Begin
// captures what an enqueue would (the calling thread's correlation id, pid/tid, now as the
// enqueue time) and returns null while profiling is off; Started stamps the start, Ended the
// end and stores the record (both accept null). A begun task counts as pending for
// npurtProfilerFlush until it ended. A null stream is the current device's default stream.
typedef struct npurtProfiledTask npurtProfiledTask;
npurtProfiledTask* npurtProfilerBeginTask(npurtTaskKind kind, const char* name, aclrtStream stream,
                                          uint64_t bytes, int32_t memcpyKind);
void npurtProfilerTaskStarted(npurtProfiledTask* task);
void npurtProfilerTaskEnded(npurtProfiledTask* task, aclError status);

// Moves up to `capacity` finished records, oldest first, into `out`; *count gets how many.
aclError npurtProfilerTakeRecords(npurtTaskRecord* out, size_t capacity, size_t* count);
// Records not yet taken, and records dropped because the buffer was full.
size_t npurtProfilerPendingRecords(void);
uint64_t npurtProfilerDroppedRecords(void);

#ifdef __cplusplus
}  // extern "C"
#endif
