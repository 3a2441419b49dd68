// The runtime side of npurt/ipc.h: shareable segments for aclrtMalloc, and the shared
// slots behind interprocess events.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "npurt/acl_rt.h"
#include "npurt/ipc.h"

namespace npurt {

// One device allocation: a memfd of `size` bytes mapped shared at `base`.
struct SharedSegment {
  void* base = nullptr;
  size_t size = 0;
  int fd = -1;
  uint64_t serial = 0;
};

aclError createSharedSegment(size_t size, int32_t device, SharedSegment* segment);
// Unmaps and closes it; keys and descriptors naming it stop opening.
void destroySharedSegment(const SharedSegment& segment);

// An interprocess event's state, in the creating process's directory. Generations are
// 32-bit so waiters can sleep on `completed` with a futex, across processes.
struct IpcEventSlot {
  std::atomic<uint32_t> recorded;
  std::atomic<uint32_t> completed;
};

// A new slot in this process's directory.
aclError ipcCreateEventSlot(IpcEventSlot** slot, uint32_t* index);
void ipcReleaseEventSlot(uint32_t index);
aclError ipcEventHandle(uint32_t index, aclrtIpcEventHandle* handle);
// The slot a handle names, from this or another process (whose directory stays mapped).
aclError ipcOpenEventSlot(const aclrtIpcEventHandle& handle, IpcEventSlot** slot);

}  // namespace npurt
