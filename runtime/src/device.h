// The device table: how many devices this process sees and how big they are.
#pragma once

#include <cstddef>
#include <cstdint>

#include "npurt/acl_rt.h"

namespace npurt {

// Fails (with a message naming the variable or the id) when the environment is
// malformed or `device` is not a visible device.
aclError checkDevice(int32_t device, const char* caller);
// Visible device count, or a failure when the environment is malformed.
aclError visibleDeviceCount(uint32_t* count);
// Bytes of global memory per device (valid after checkDevice succeeded):
// NPU_SIM_DEVICE_MEMORY, else min(64 GiB, hostMemoryLimit()).
size_t deviceCapacity();
// Bytes of host memory the simulator may take for device and pinned memory, all
// devices together: NPU_SIM_HOST_MEMORY, else min(3/4 of physical memory, 9/10 of
// the memory available when the table was first read), at least 256 MiB.
size_t hostMemoryLimit();
// The machine's physical memory and what it can give now (MemAvailable), in bytes.
size_t hostPhysicalBytes();
size_t hostAvailableBytes();
// The calling thread's current device (0 until aclrtSetDevice).
int32_t currentDevice();

// npurtDeviceStop's flag, read on every enqueue and before every task a worker starts.
bool deviceStopped(int32_t device);
// The failure a task of a stopped device gets (ACL_ERROR_RT_DEVICE_TASK_ABORT, with a message).
aclError stoppedDeviceError(int32_t device, const char* caller);
// Kernel deadline from the operator execution timeout: 0 if none, else now + timeout (steady ns).
int64_t kernelDeadlineNs();
int64_t steadyNowNs();
// A stream of `device` starts / finishes running a task (utilization's busy intervals).
void noteTaskStarted(int32_t device);
void noteTaskFinished(int32_t device);

}  // namespace npurt
