// The simulated Ascend runtime: an ACL-shaped C API.
//
// Names and argument orders follow CANN's acl/acl_rt.h where the concept is the
// same, so the host code that `npu-translate --emit-acl` prints reads naturally
// against it. Device memory is host memory this runtime hands out and counts
// against each device's capacity; a stream is a worker thread draining a FIFO
// of tasks; a kernel's blocks run on a process-wide AI-core thread pool.
//
// Every entry point checks its arguments and returns a status; on failure the
// message for the calling thread is available from aclGetRecentErrMsg().
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int aclError;

// Status codes (values as in CANN where CANN has the code).
#define ACL_SUCCESS 0
#define ACL_ERROR_INVALID_PARAM 100000
#define ACL_ERROR_RT_PARAM_INVALID 107000
#define ACL_ERROR_RT_INVALID_DEVICEID 107001
#define ACL_ERROR_RT_FEATURE_NOT_SUPPORT 207000
#define ACL_ERROR_RT_MEMORY_ALLOCATION 207001
#define ACL_ERROR_RT_STREAM_NOT_COMPLETE 207017
#define ACL_ERROR_RT_EVENT_NOT_COMPLETE 207018
#define ACL_ERROR_RT_MEMORY_IN_USE 207019
#define ACL_ERROR_RT_AICORE_EXCEPTION 507015
#define ACL_ERROR_RT_INTERNAL_ERROR 507899

// The message of the calling thread's most recent failure ("" if none).
const char* aclGetRecentErrMsg(void);

// ---------------------------------------------------------------- devices
// Device count, capacity and visibility come from the environment, read once:
//   NPU_SIM_DEVICE_COUNT   physical devices (default 8)
//   NPU_SIM_DEVICE_MEMORY  bytes per device, suffixes K/M/G allowed
//                          (default min(64G, the host limit below))
//   NPU_SIM_HOST_MEMORY    host bytes all device and pinned allocations together may
//                          take (default min(3/4 of physical, 9/10 of available memory))
//   ASCEND_RT_VISIBLE_DEVICES  comma list of physical ids; logical ids follow its order
typedef struct aclrtDeviceProp {
  char name[64];            // "Ascend910B1"
  size_t totalGlobalMem;    // bytes
  uint32_t cubeCoreNum;     // AIC
  uint32_t vectorCoreNum;   // AIV
  size_t l2CacheSize;
  size_t l1Size, l0aSize, l0bSize, l0cSize, ubSize;  // per core
  double cubeFreqGHz;
} aclrtDeviceProp;

aclError aclrtGetDeviceCount(uint32_t* count);
aclError aclrtSetDevice(int32_t deviceId);  // current device of the calling thread
aclError aclrtGetDevice(int32_t* deviceId);
aclError aclrtGetDeviceProperties(int32_t deviceId, aclrtDeviceProp* prop);
aclError aclrtGetMemInfo(int32_t deviceId, size_t* freeBytes, size_t* totalBytes);
// Host memory taken by device and pinned allocations, and the simulator's limit for it.
// Allocations also fail (as out of memory) when the host itself runs short.
aclError aclrtGetHostMemInfo(size_t* usedBytes, size_t* limitBytes);
// Waits for every stream of the current device; returns the first pending task error.
aclError aclrtSynchronizeDevice(void);

// ---------------------------------------------------------------- raw memory
// Raw device allocations, below the caching allocator (npurt/caching_allocator.h).
// Exceeding the device capacity is ACL_ERROR_RT_MEMORY_ALLOCATION, never a crash.
aclError aclrtMalloc(void** devPtr, size_t size, int32_t deviceId);
aclError aclrtFree(void* devPtr);
// Page-locked host memory (the pinned memory of torch's pin_memory()).
aclError aclrtMallocHost(void** hostPtr, size_t size);
aclError aclrtFreeHost(void* hostPtr);

typedef enum aclrtMemLocation {
  ACL_MEM_LOCATION_UNREGISTERED = 0,  // ordinary host memory
  ACL_MEM_LOCATION_HOST_PINNED = 1,
  ACL_MEM_LOCATION_DEVICE = 2,
} aclrtMemLocation;
// Where ptr points: into a device allocation (deviceId set), pinned host memory, or neither.
aclError aclrtPointerGetAttributes(const void* ptr, aclrtMemLocation* location, int32_t* deviceId);

// ---------------------------------------------------------------- IPC memory
// Device memory is backed by memfd segments, so another process of the same user on
// this host can map it (npurt/ipc.h explains how). CUDA's rules hold: an exported
// block must stay allocated until every importer has closed its key.
#define ACL_IPC_MEM_KEY_LEN 256
// Writes a key naming [devPtr, devPtr + size), which must lie in one device allocation.
// Each key counts one pending importer until that importer closes it.
aclError aclrtIpcMemGetExportKey(void* devPtr, size_t size, char* key, size_t len, uint64_t flag);
// Maps the memory a key names (on the exporter's device index) and returns its address.
aclError aclrtIpcMemImportByKey(void** devPtr, const char* key, uint64_t flag);
// Importer: unmaps (once every import of the key is closed) and releases the key's count.
// Exporter: forgets the key; fails with ACL_ERROR_RT_MEMORY_IN_USE while importers hold it.
aclError aclrtIpcMemClose(const char* key);

// ---------------------------------------------------------------- streams
typedef struct aclrtStreamImpl* aclrtStream;
typedef struct aclrtEventImpl* aclrtEvent;

// Each device owns 1 + 2 * ACL_STREAM_POOL_SIZE streams addressed by index:
// 0 is the default stream, 1..32 the low-priority pool, 33..64 the high-priority
// pool. A stream's worker thread starts on its first task. Streams live for the
// whole process. Wherever a stream is an argument, NULL means the calling
// thread's current device's default stream, as in ACL.
#define ACL_STREAM_POOL_SIZE 32
// After the pools, 4 sync-launch streams (torch_npu's SyncLaunchStream): a task queued on
// one runs in the caller before the call returns, as under ASCEND_LAUNCH_BLOCKING=1.
#define ACL_SYNC_LAUNCH_STREAM_BASE (1 + 2 * ACL_STREAM_POOL_SIZE)
#define ACL_SYNC_LAUNCH_STREAM_COUNT 4
aclError aclrtGetStreamByIndex(int32_t deviceId, uint32_t index, aclrtStream* stream);
aclError aclrtStreamGetInfo(aclrtStream stream, int32_t* deviceId, uint32_t* index, int32_t* priority);
// Blocks until every task queued so far has run; returns (and clears) the first
// error a task on this stream recorded since the last synchronizing call.
aclError aclrtSynchronizeStream(aclrtStream stream);
// *done = 1 when the queue is drained. Does not block.
aclError aclrtStreamQuery(aclrtStream stream, int32_t* done);
// Tasks queued on `stream` after this call run only once `event` has completed.
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);

// ---------------------------------------------------------------- tasks
typedef enum aclrtMemcpyKind {
  ACL_MEMCPY_HOST_TO_HOST = 0,
  ACL_MEMCPY_HOST_TO_DEVICE = 1,
  ACL_MEMCPY_DEVICE_TO_HOST = 2,
  ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
} aclrtMemcpyKind;

// Synchronous copy (waits for nothing already queued: callers synchronize first).
aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind);
// Copy as a task on `stream`; returns at once.
aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count,
                          aclrtMemcpyKind kind, aclrtStream stream);
aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream);

// A compiled kernel: runs one block. `args` points to the packed argument bytes
// given at launch (copied by the runtime, so the caller's buffer may die).
// Non-zero return = the kernel failed (reported as ACL_ERROR_RT_AICORE_EXCEPTION).
typedef int32_t (*aclrtKernelFunc)(const void* args, uint32_t blockIdx, uint32_t blockDim);
// The return of a kernel whose device-side assertion failed (an index out of range).
#define NPURT_KERNEL_ASSERT_FAILED 1
// Queues a launch of blockDim blocks spread over the AI-core pool; returns at once.
// `name` (may be NULL) labels the launch in profiling records.
aclError aclrtLaunchKernel(aclrtKernelFunc kernel, uint32_t blockDim, const void* args, size_t argsSize,
                           const char* name, aclrtStream stream);

// A host function run in order on the stream's worker (used for collectives and
// the CPU fallback). Non-zero return = task error, kept for the next sync.
typedef int32_t (*aclrtHostFunc)(void* userData);
aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void* userData);

// ---------------------------------------------------------------- events
#define ACL_EVENT_SYNC 0x1u
#define ACL_EVENT_TIME_LINE 0x8u  // take timestamps: needed for aclrtEventElapsedTime

aclError aclrtCreateEventWithFlag(aclrtEvent* event, uint32_t flag);
aclError aclrtDestroyEvent(aclrtEvent event);
// Captures the work queued on `stream` so far; the event completes when it has run.
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
// *complete = 1 when the captured work has run (or the event was never recorded).
aclError aclrtQueryEventStatus(aclrtEvent event, int32_t* complete);
aclError aclrtSynchronizeEvent(aclrtEvent event);
// An event created with ACL_EVENT_IPC keeps its state in shared memory: another process
// opens it from its handle, and records/waits there order work across both processes.
#define ACL_EVENT_IPC 0x40u
typedef struct aclrtIpcEventHandle {
  char reserved[64];
} aclrtIpcEventHandle;
aclError aclrtIpcGetEventHandle(aclrtEvent event, aclrtIpcEventHandle* handle);
aclError aclrtIpcOpenEventHandle(aclrtIpcEventHandle handle, aclrtEvent* event);
// Milliseconds between two completed timing events.
aclError aclrtEventElapsedTime(float* ms, aclrtEvent start, aclrtEvent end);

// ---------------------------------------------------------------- execution mode
// ASCEND_LAUNCH_BLOCKING=1 (read once) runs every task synchronously in the caller;
// a failing task's error is then returned by the call that queued it.
int32_t aclrtLaunchBlocking(void);

#ifdef __cplusplus
}  // extern "C"
#endif
