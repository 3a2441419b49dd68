// Stream capture: record the work queued on a stream into a graph (an "RI model", as
// CANN's aclmdlRI* calls name it) and replay it later, the mechanism behind NPUGraph.
//
// Between aclmdlRICaptureBegin and aclmdlRICaptureEnd, kernel launches, async copies and
// fills, host functions and event records/waits queued on the capturing stream are
// recorded instead of run. A stream that waits on an event recorded in the capture joins
// it (its tasks are recorded too) until the capture ends. aclmdlRIExecuteAsync re-submits
// the recorded tasks, in recording order, on any stream; kernel arguments point at the
// same device memory as at capture, so the caller keeps that memory alive (NPUGraph's
// private pool does).
//
// Calls that would wait for captured work (synchronizing the capturing stream, an event
// recorded in the capture) fail with ACL_ERROR_RT_STREAM_CAPTURE_UNSUPPORTED and
// invalidate the capture; so do other synchronizing calls (device/stream/event
// synchronize, aclrtMemcpy) and copies between the device and pageable host memory, as
// the capture mode decides (torch.cuda's capture_error_mode):
//   GLOBAL       such calls fail in the capturing thread, and in every other thread too
//   THREAD_LOCAL such calls fail only in the thread that began the capture
//   RELAXED      only the calls that inherently conflict with the capture fail
// aclmdlRICaptureEnd on an invalidated capture fails with
// ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED; the stream is then usable again.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "npurt/acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

// Simulator codes in CANN's 207xxx (feature) range.
#define ACL_ERROR_RT_STREAM_CAPTURE_UNSUPPORTED 207030
#define ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED 207031

typedef struct aclmdlRIImpl* aclmdlRI;

typedef enum aclmdlRICaptureStatus {
  ACL_MODEL_RI_CAPTURE_STATUS_NONE = 0,
  ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE = 1,
  ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED = 2,
} aclmdlRICaptureStatus;

typedef enum aclmdlRICaptureMode {
  ACL_MODEL_RI_CAPTURE_MODE_GLOBAL = 0,
  ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL = 1,
  ACL_MODEL_RI_CAPTURE_MODE_RELAXED = 2,
} aclmdlRICaptureMode;

// Starts capturing `stream`. The default stream (index 0) cannot be captured, nor a stream
// that is already capturing.
aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode);
// Whether `stream` is capturing (joined streams count); *modelRI (may be NULL) is the graph
// being built, NULL when not capturing.
aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus* status, aclmdlRI* modelRI);
// Ends the capture begun on `stream` and hands the graph to the caller (destroy it with
// aclmdlRIDestroy). An invalidated capture returns its error and no graph.
aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI* modelRI);
// Queues the graph's tasks on `stream`; returns at once.
aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream);
aclError aclmdlRIDestroy(aclmdlRI modelRI);
// Swaps the calling thread's capture mode with *mode (CUDA's
// cudaThreadExchangeStreamCaptureMode): a thread in RELAXED mode may make synchronizing
// calls while other threads capture.
aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode* mode);

// ---------------------------------------------------------------- simulator extensions
// Tasks recorded in the graph.
aclError npurtGraphTaskCount(aclmdlRI modelRI, size_t* count);
// Writes one line per task (kind, kernel name, block dim, bytes) to `path`.
aclError npurtGraphDump(aclmdlRI modelRI, const char* path);

// Replay-time kernel arguments (what torch.cuda does with device-side RNG offsets): while
// `stream` captures, *placeholder receives a unique 64-bit value the caller passes as an
// 8-byte-aligned kernel argument; every replay writes the graph's parameter `slot` plus
// `addend` there instead. Parameters start at 0; set them before each aclmdlRIExecuteAsync.
aclError npurtCaptureParam(aclrtStream stream, uint32_t slot, uint64_t addend, uint64_t* placeholder);
aclError npurtGraphSetParam(aclmdlRI modelRI, uint32_t slot, uint64_t value);

// aclrtLaunchHostFunc for a callback the runtime owns: `release(userData)` (may be NULL)
// runs once the callback can no longer run - after it ran, when the call fails, or, when it
// was captured, when the graph is destroyed - so a captured host function runs again at
// every replay.
typedef void (*npurtReleaseFunc)(void* userData);
aclError npurtLaunchHostFuncOwned(aclrtStream stream, aclrtHostFunc fn, void* userData, npurtReleaseFunc release);

#ifdef __cplusplus
}  // extern "C"
#endif
