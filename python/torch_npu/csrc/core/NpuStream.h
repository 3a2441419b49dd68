// NPU streams as c10::Streams: a c10::Stream's id is the runtime's stream index on
// its device (0 = default stream, 1..32 low-priority pool, 33..64 high-priority pool;
// see aclrtGetStreamByIndex). The current stream is per thread and per device.
#pragma once

#include <c10/core/Stream.h>

#include <functional>

#include "npurt/acl_rt.h"

namespace torch_npu {

aclrtStream nativeStream(c10::Stream stream);
c10::Stream getCurrentStream(c10::DeviceIndex device = -1);
c10::Stream getDefaultStream(c10::DeviceIndex device = -1);
// Round robin over the device's pool of the requested priority.
c10::Stream getStreamFromPool(c10::DeviceIndex device = -1, bool highPriority = false);
// Makes `stream` current for its device on this thread; returns the previous one.
c10::Stream exchangeCurrentStream(c10::Stream stream);
// -1 for the high-priority pool, 0 otherwise (lower is higher, as in CUDA).
int streamPriority(c10::Stream stream);

// Waits for the stream; raises the first error a task recorded on it.
void synchronizeStream(c10::Stream stream);
bool queryStream(c10::Stream stream);
// Waits for every stream of `device`; raises the first error a task recorded.
void synchronizeDevice(c10::DeviceIndex device);

// Queues `task` on `stream`: it runs on the stream's worker after the work queued
// before it. An exception thrown by the task becomes the stream's pending error,
// raised (with its message) by the next synchronizing call.
void launchHostTask(c10::Stream stream, std::function<void()> task);

// torch.npu.set_sync_debug_mode: 0 ignore, 1 warn, 2 error on synchronizing calls.
void setSyncDebugMode(int mode);
int getSyncDebugMode();
// Called by operations that make the host wait for the device (item(), blocking D2H).
void reportSynchronizingCall(const char* what);

}  // namespace torch_npu
