// Device control beyond ACL's basics: torch_npu's stop_device / restart_device, the
// operator execution timeout (CANN's aclrtSetOpExecuteTimeOutWithMs), and how busy a
// device's streams were lately (torch.npu.utilization).
#pragma once

#include <stdint.h>

#include "npurt/acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

// CANN's code for work refused or dropped because its device was stopped.
#define ACL_ERROR_RT_DEVICE_TASK_ABORT 107022
// CANN's code for a kernel that ran past the operator execution timeout.
#define ACL_ERROR_RT_AICORE_TIMEOUT 507014

// Stops `deviceId`: tasks queued on its streams and not yet started are dropped (each fails
// with ACL_ERROR_RT_DEVICE_TASK_ABORT, kept as its stream's error), and queuing new work on
// it fails with that code until npurtDeviceRestart. A task already running finishes.
aclError npurtDeviceStop(int32_t deviceId);
// Makes a stopped (or running) device usable again: clears the stop and the errors its
// streams kept from dropped tasks.
aclError npurtDeviceRestart(int32_t deviceId);
// 1 while the device is stopped.
int32_t npurtDeviceStopped(int32_t deviceId);

// A kernel running longer than `timeoutMs` fails with ACL_ERROR_RT_AICORE_TIMEOUT (raised at
// the next synchronizing call, like any kernel error); its remaining blocks are not started.
// 0 (the default) means no limit. Applies to kernels launched from now on.
aclError aclrtSetOpExecuteTimeOutWithMs(uint32_t timeoutMs);
uint32_t npurtOpExecuteTimeoutMs(void);

// Percent of the last NPURT_UTILIZATION_WINDOW_MS milliseconds during which at least one
// stream of the device was running a task (kernel, copy, host function, event wait).
// Busy time is logged from the first call on (before it, a task costs one atomic load more).
#define NPURT_UTILIZATION_WINDOW_MS 100
aclError npurtDeviceUtilization(int32_t deviceId, int32_t* percent);

#ifdef __cplusplus
}  // extern "C"
#endif
