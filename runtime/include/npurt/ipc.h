// Sharing device memory and events between processes of one user on one host.
//
// Every device allocation (aclrtMalloc) is a memfd segment mapped MAP_SHARED, so its
// pages belong to a kernel file, not to the process: the kernel frees them when the
// last process closes and unmaps it, a crash included, and nothing appears in /dev/shm.
//
// Another process opens a segment through /proc/<exporter pid>/fd/<fd>. That needs no
// server thread in the exporter and no socket (SCM_RIGHTS would need a listener per
// process, and a way to find it); the kernel allows it for processes of the same user
// (ptrace read access, which Yama does not restrict). An fd number can be reused once
// closed, so the opener checks the file's inode against the one in the key, and the
// segment's serial against the exporter's directory (below): a stale key fails instead
// of mapping someone else's memory.
//
// Each exporting process has one directory, a small memfd mapped by its importers:
// per exported segment its serial (0 once freed), per export key a count of importers
// still holding it (CUDA's IPC ref counter), and the state of interprocess events.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "npurt/acl_rt.h"

namespace npurt {

// Where a range of device memory lives, in terms another process can open: plain data,
// fit to place in shared memory (the lccl backend publishes these per collective).
struct IpcBufferDesc {
  int32_t pid = 0;
  int32_t device = -1;
  int32_t segmentFd = -1;
  int32_t directoryFd = -1;
  uint64_t segmentInode = 0;
  uint64_t directoryInode = 0;
  uint64_t serial = 0;       // the segment's process-unique number
  uint64_t segmentSize = 0;
  uint64_t offset = 0;       // of the range in its segment
  uint64_t size = 0;
  uint32_t segmentSlot = 0;  // where the directory keeps the segment's serial
  uint32_t counterSlot = 0;  // the key's importer count (0: none; descriptors have none)
};

// Describes [ptr, ptr + size) of a device allocation of this process.
aclError ipcDescribe(const void* ptr, size_t size, IpcBufferDesc* desc);
// The address of a peer's range in this process. Mappings are cached per segment and
// dropped once the exporter frees the segment; the caller keeps the exporter from freeing
// it while in use (the lccl backend's barriers do).
aclError ipcOpenPeer(const IpcBufferDesc& desc, void** ptr);
// Whether importers still hold the key this process exported (*inUse = their count).
aclError ipcExportInUse(const char* key, int64_t* inUse);
// A key imported here goes on to another process (a received tensor sent again): counts one
// more holder, whom the exporter waits for as for the first.
aclError ipcForwardKey(const char* key);
// Drops one holder's count of a key received but not imported (the memory was open here
// already, under this key or another; an exporter may receive its own key back).
aclError ipcReleaseKey(const char* key);
// Whether `ptr` is in memory mapped from another process (its reuse is the exporter's business).
bool ipcIsImported(const void* ptr);
// The exporter pid a key names (0 if it is not a key).
int32_t ipcKeyPid(const char* key);
// Sleeps while *word == expected, at most `timeoutMs`; wakes every sleeper on `word`.
// Not process-private (futex without FUTEX_PRIVATE): the word may be in shared memory.
void sharedWait(const std::atomic<uint32_t>* word, uint32_t expected, int timeoutMs);
void sharedWake(std::atomic<uint32_t>* word);
// Counts of this process's IPC state, for tests: segments mapped from other processes,
// export keys not yet closed, interprocess events alive.
struct IpcCounts {
  size_t importedSegments = 0;
  size_t openExportKeys = 0;
  size_t ipcEvents = 0;
};
IpcCounts ipcCounts();

}  // namespace npurt
