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
// Bytes of global memory per device (valid after checkDevice succeeded).
size_t deviceCapacity();
// The calling thread's current device (0 until aclrtSetDevice).
int32_t currentDevice();

}  // namespace npurt
