// Stream capture's hooks into the task entry points (npurt/acl_mdl.h describes the API).
//
// Each entry point that queues work calls its hook after checking its arguments; while the
// stream captures, the hook records the call in the graph and returns true with *rc set,
// and the entry point returns *rc instead of queuing. Replay calls the entry points again
// with the recorded arguments on the replay stream, so a replay is ordinary stream work.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "npurt/acl_mdl.h"
#include "stream.h"

namespace npurt {

// Captures underway in the process: the hooks' fast path is one relaxed load of this.
extern std::atomic<int> activeCaptures;
inline bool captureActive() { return activeCaptures.load(std::memory_order_relaxed) > 0; }
inline bool capturing(aclrtStream stream) {
  return captureActive() && stream->capture.load(std::memory_order_acquire) != nullptr;
}

bool captureKernel(aclrtStream stream, aclrtKernelFunc kernel, uint32_t blockDim, const void* args, size_t argsSize,
                   const char* name, aclError* rc);
bool captureCopy(aclrtStream stream, void* dst, const void* src, size_t count, aclrtMemcpyKind kind, aclError* rc);
bool captureFill(aclrtStream stream, void* devPtr, int32_t value, size_t count, aclError* rc);
bool captureHostFunc(aclrtStream stream, aclrtHostFunc fn, void* userData, npurtReleaseFunc release, aclError* rc);
bool captureEventRecord(aclrtStream stream, aclrtEvent event, aclError* rc);
// Also makes a stream that waits on an event recorded in a capture join that capture.
bool captureEventWait(aclrtStream stream, aclrtEvent event, aclError* rc);
// The event is being destroyed: graphs stop referring to it.
void captureForgetEvent(aclrtEvent event);

// Synchronizing calls ask first: ACL_SUCCESS when allowed, else a failure whose message
// says why (and the captures that forbid the call are invalidated).
aclError captureCheckStreamSync(aclrtStream stream, const char* call);
aclError captureCheckEventSync(aclrtEvent event, const char* call);
aclError captureCheckSafe(const char* call);  // device synchronize, aclrtMemcpy
// A task that reached a capturing stream without a hook recording it (fails: it cannot be replayed).
aclError captureRejectTask(aclrtStream stream);
// Whether a capture is underway on `device` (the allocator defers stream-use events then).
bool captureUnderwayOn(int32_t device);
// The stream that began the capture `stream` records into (itself, or the one it joined); null when none.
aclrtStream captureOriginOf(aclrtStream stream);

}  // namespace npurt
