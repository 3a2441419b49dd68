// Device selection for the calling thread, validation of device indices, and
// the per-process state torch asks about (primary contexts, forked children).
#pragma once

#include <c10/core/Device.h>

namespace torch_npu {

// Number of visible devices; 0 (never an exception) when the runtime reports an error.
c10::DeviceIndex deviceCount() noexcept;
// Raises an ERR00001 error naming the valid range unless 0 <= index < deviceCount().
void checkDeviceIndex(c10::DeviceIndex index);
// `index`, or the current device when index is -1; validated.
c10::DeviceIndex resolveDevice(c10::DeviceIndex index);

c10::DeviceIndex currentDevice();
void setCurrentDevice(c10::DeviceIndex index);

// A device counts as initialised (torch's "primary context") once it was selected or
// allocated on; backward and GradScaler ask this before touching a device.
void markInitialized(c10::DeviceIndex index);
bool hasPrimaryContext(c10::DeviceIndex index);

// Stream workers do not survive fork(): a child of an initialised process must not use
// the device. Raises an ERR00009 error naming the 'spawn' start method when it tries.
void checkNotForkedChild();
bool isForkedChild();

}  // namespace torch_npu
