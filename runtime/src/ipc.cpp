// Shareable device memory and interprocess event state (npurt/ipc.h says why memfd and
// /proc/<pid>/fd).
#include "ipc.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "device.h"
#include "error.h"
#include "memory.h"
#include "npurt/ipc.h"

namespace npurt {
namespace {

constexpr uint64_t kDirectoryMagic = 0x6e70752d69706331ULL;  // "npu-ipc1"
constexpr uint32_t kSegmentSlots = 1 << 16;
constexpr uint32_t kCounterSlots = 1 << 16;
constexpr uint32_t kEventSlots = 1 << 13;
constexpr const char* kKeyPrefix = "npuipc1";

static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free,
              "shared-memory state needs lock-free atomics");

// One per exporting process; its pages are zero when created, which is every slot's empty state.
struct Directory {
  uint64_t magic;
  int32_t pid;
  uint32_t reserved;
  std::atomic<uint64_t> segments[kSegmentSlots];  // serial of the exported segment, 0: free
  std::atomic<int64_t> counters[kCounterSlots];   // importers still holding a key (slot 0 unused)
  IpcEventSlot events[kEventSlots];
};

// Slots handed out by this process: lowest free first.
class SlotPool {
 public:
  SlotPool(uint32_t first, uint32_t capacity) : next_(first), capacity_(capacity) {}
  bool take(uint32_t* slot) {
    if (!free_.empty()) {
      *slot = free_.back();
      free_.pop_back();
      return true;
    }
    if (next_ >= capacity_) return false;
    *slot = next_++;
    return true;
  }
  void give(uint32_t slot) { free_.push_back(slot); }
  size_t inUse(uint32_t first) const { return next_ - first - free_.size(); }

 private:
  std::vector<uint32_t> free_;
  uint32_t next_;
  uint32_t capacity_;
};

// A file another process exported, mapped here.
struct PeerFile {
  void* base = nullptr;
  size_t size = 0;
};

// A peer's segment mapped here: by aclrtIpcMemImportByKey (counted) and/or by
// ipcOpenPeer (cached while the exporter keeps the segment).
struct ImportedSegment {
  PeerFile file;
  int32_t device = -1;
  uint64_t serial = 0;
  const std::atomic<uint64_t>* liveSerial = nullptr;  // the exporter's directory slot
  int imports = 0;
  bool cached = false;  // opened by ipcOpenPeer: kept until the exporter frees it
};

struct IpcState {
  std::mutex mutex;
  int directoryFd = -1;
  uint64_t directoryInode = 0;
  Directory* directory = nullptr;
  SlotPool segmentSlots{0, kSegmentSlots};
  SlotPool counterSlots{1, kCounterSlots};
  SlotPool eventSlots{0, kEventSlots};
  std::unordered_map<uint64_t, uint32_t> slotOfSerial;  // exported segments of this process
  std::unordered_map<uint32_t, uint64_t> openKeys;      // counter slot -> serial, keys this process exported
  // Other processes' directories and segments, by (pid, inode) and (pid, serial).
  std::map<std::pair<int32_t, uint64_t>, Directory*> peerDirectories;
  std::map<std::pair<int32_t, uint64_t>, ImportedSegment> imported;
  std::unordered_map<std::string, std::pair<int32_t, uint64_t>> importedKeys;  // key -> imported segment
};

// Leaked on purpose: stream workers may free memory while static destructors run.
IpcState& state() {
  static IpcState* instance = new IpcState();
  return *instance;
}

std::atomic<uint64_t> nextSerial{1};

std::string errnoText() { return std::strerror(errno); }

// Requires state.mutex.
aclError ensureDirectory(IpcState& st, const char* caller) {
  if (st.directory != nullptr) return ACL_SUCCESS;
  int fd = static_cast<int>(syscall(SYS_memfd_create, "npurt-ipc-directory", MFD_CLOEXEC));
  if (fd < 0) return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, std::string(caller) + ": memfd_create: " + errnoText());
  struct stat info {};
  void* base = MAP_FAILED;
  if (ftruncate(fd, sizeof(Directory)) == 0 && fstat(fd, &info) == 0) {
    base = mmap(nullptr, sizeof(Directory), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  if (base == MAP_FAILED) {
    std::string why = errnoText();
    close(fd);
    return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, std::string(caller) + ": mapping the IPC directory failed: " + why);
  }
  st.directory = static_cast<Directory*>(base);
  st.directory->magic = kDirectoryMagic;
  st.directory->pid = getpid();
  st.directoryFd = fd;
  st.directoryInode = info.st_ino;
  return ACL_SUCCESS;
}

// Opens another process's file through /proc and maps it, after checking it is the
// file the key names (fd numbers are reused, inodes of live files are not).
aclError mapPeerFile(int32_t pid, int32_t fd, uint64_t inode, size_t size, const char* caller, PeerFile* out) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
  int local = open(path, O_RDWR | O_CLOEXEC);
  if (local < 0) {
    std::string why = errnoText();
    std::string hint = errno == ENOENT ? "the exporting process " + std::to_string(pid) +
                                             " has exited or freed the memory; it must keep it alive until every "
                                             "importer has closed it"
                                       : "only processes of the same user on the same host can share NPU memory";
    return fail(ACL_ERROR_INVALID_PARAM, std::string(caller) + ": cannot open " + path + " (" + why + "): " + hint);
  }
  struct stat info {};
  if (fstat(local, &info) != 0 || static_cast<uint64_t>(info.st_ino) != inode ||
      static_cast<size_t>(info.st_size) < size) {
    close(local);
    return fail(ACL_ERROR_INVALID_PARAM, std::string(caller) + ": process " + std::to_string(pid) +
                                             " no longer holds the memory this key names (it was freed)");
  }
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, local, 0);
  std::string why = errnoText();
  close(local);  // the mapping keeps the file
  if (base == MAP_FAILED) return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, std::string(caller) + ": mmap: " + why);
  *out = PeerFile{base, size};
  return ACL_SUCCESS;
}

// Requires state.mutex. A peer's directory, mapped once per process and kept.
aclError peerDirectory(IpcState& st, int32_t pid, int32_t fd, uint64_t inode, const char* caller, Directory** out) {
  if (pid == getpid()) {
    if (st.directory == nullptr || st.directoryInode != inode) {
      return fail(ACL_ERROR_INVALID_PARAM, std::string(caller) + ": the key names no export of this process");
    }
    *out = st.directory;
    return ACL_SUCCESS;
  }
  auto it = st.peerDirectories.find({pid, inode});
  if (it != st.peerDirectories.end()) {
    *out = it->second;
    return ACL_SUCCESS;
  }
  PeerFile file;
  if (aclError rc = mapPeerFile(pid, fd, inode, sizeof(Directory), caller, &file)) return rc;
  auto* dir = static_cast<Directory*>(file.base);
  if (dir->magic != kDirectoryMagic || dir->pid != pid) {
    munmap(file.base, file.size);
    return fail(ACL_ERROR_INVALID_PARAM, std::string(caller) + ": process " + std::to_string(pid) +
                                             " exported no NPU IPC directory under that name");
  }
  st.peerDirectories[{pid, inode}] = dir;
  *out = dir;
  return ACL_SUCCESS;
}

// Requires state.mutex. Unmaps imported segments nobody imports whose exporter freed them.
void dropStaleSegments(IpcState& st) {
  for (auto it = st.imported.begin(); it != st.imported.end();) {
    ImportedSegment& seg = it->second;
    if (seg.imports == 0 && seg.liveSerial->load(std::memory_order_acquire) != seg.serial) {
      unregisterImportedRange(seg.file.base);
      munmap(seg.file.base, seg.file.size);
      it = st.imported.erase(it);
    } else {
      ++it;
    }
  }
}

// Requires state.mutex. The segment `desc` names, mapped here (from the cache when it can).
aclError importSegment(IpcState& st, const IpcBufferDesc& desc, const char* caller, ImportedSegment** out) {
  Directory* dir = nullptr;
  if (aclError rc = peerDirectory(st, desc.pid, desc.directoryFd, desc.directoryInode, caller, &dir)) return rc;
  if (desc.segmentSlot >= kSegmentSlots) return fail(ACL_ERROR_INVALID_PARAM, std::string(caller) + ": malformed key");
  const std::atomic<uint64_t>* live = &dir->segments[desc.segmentSlot];
  if (live->load(std::memory_order_acquire) != desc.serial) {
    return fail(ACL_ERROR_INVALID_PARAM, std::string(caller) + ": process " + std::to_string(desc.pid) +
                                             " has freed the memory this key names: the exporter must keep a "
                                             "shared tensor alive until its importers are done with it");
  }
  auto key = std::make_pair(desc.pid, desc.serial);
  auto it = st.imported.find(key);
  if (it == st.imported.end()) {
    dropStaleSegments(st);
    ImportedSegment seg;
    if (aclError rc = mapPeerFile(desc.pid, desc.segmentFd, desc.segmentInode, desc.segmentSize, caller, &seg.file)) {
      return rc;
    }
    seg.device = desc.device;
    seg.serial = desc.serial;
    seg.liveSerial = live;
    registerImportedRange(seg.file.base, seg.file.size, desc.device, desc.serial);
    it = st.imported.emplace(key, seg).first;
  }
  *out = &it->second;
  return ACL_SUCCESS;
}

std::string formatKey(const IpcBufferDesc& d) {
  char buf[ACL_IPC_MEM_KEY_LEN];
  std::snprintf(buf, sizeof(buf),
                "%s:%" PRId32 ":%" PRId32 ":%" PRId32 ":%" PRId32 ":%" PRIx64 ":%" PRIx64 ":%" PRIx64 ":%" PRIx64
                ":%" PRIx64 ":%" PRIx64 ":%" PRIx32 ":%" PRIx32,
                kKeyPrefix, d.pid, d.device, d.segmentFd, d.directoryFd, d.segmentInode, d.directoryInode, d.serial,
                d.segmentSize, d.offset, d.size, d.segmentSlot, d.counterSlot);
  return buf;
}

bool parseKey(const char* key, IpcBufferDesc* d) {
  if (key == nullptr) return false;
  char prefix[16] = {};
  int consumed = 0;
  int n = std::sscanf(key,
                      "%7[^:]:%" SCNd32 ":%" SCNd32 ":%" SCNd32 ":%" SCNd32 ":%" SCNx64 ":%" SCNx64 ":%" SCNx64
                      ":%" SCNx64 ":%" SCNx64 ":%" SCNx64 ":%" SCNx32 ":%" SCNx32 "%n",
                      prefix, &d->pid, &d->device, &d->segmentFd, &d->directoryFd, &d->segmentInode,
                      &d->directoryInode, &d->serial, &d->segmentSize, &d->offset, &d->size, &d->segmentSlot,
                      &d->counterSlot, &consumed);
  return n == 13 && std::strcmp(prefix, kKeyPrefix) == 0 && key[consumed] == '\0' &&
         d->offset + d->size <= d->segmentSize && d->counterSlot < kCounterSlots;
}

// The counter a key's importers release, in the exporter's directory.
aclError keyCounter(IpcState& st, const IpcBufferDesc& d, const char* caller, std::atomic<int64_t>** counter) {
  Directory* dir = nullptr;
  if (aclError rc = peerDirectory(st, d.pid, d.directoryFd, d.directoryInode, caller, &dir)) return rc;
  *counter = &dir->counters[d.counterSlot];
  return ACL_SUCCESS;
}

// The count of a key's holders: in this process's directory for a key it exported, else in the
// exporter's (mapped here).
aclError holderCount(IpcState& st, const IpcBufferDesc& d, const char* caller, std::atomic<int64_t>** counter) {
  if (d.pid != getpid()) return keyCounter(st, d, caller, counter);
  auto open = st.openKeys.find(d.counterSlot);
  if (st.directory == nullptr || d.directoryInode != st.directoryInode || open == st.openKeys.end() ||
      open->second != d.serial) {
    return fail(ACL_ERROR_INVALID_PARAM, std::string(caller) + ": the key is not open in this process");
  }
  *counter = &st.directory->counters[d.counterSlot];
  return ACL_SUCCESS;
}

struct EventHandleData {
  uint64_t magic;
  int32_t pid;
  int32_t directoryFd;
  uint64_t directoryInode;
  uint32_t slot;
};
static_assert(sizeof(EventHandleData) <= sizeof(aclrtIpcEventHandle), "the event handle must fit ACL's 64 bytes");

}  // namespace

aclError createSharedSegment(size_t size, int32_t device, SharedSegment* segment) {
  int fd = static_cast<int>(syscall(SYS_memfd_create, "npurt-device-memory", MFD_CLOEXEC));
  if (fd < 0) {
    return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMalloc: the host could not provide a segment backing device " +
                                                    std::to_string(device) + " (memfd_create: " + errnoText() +
                                                    "; raise the open-file limit, ulimit -n)");
  }
  void* base = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(size)) == 0) {
    base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  if (base == MAP_FAILED) {
    std::string why = errnoText();
    close(fd);
    return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMalloc: the host could not provide " + std::to_string(size) +
                                                    " bytes backing device " + std::to_string(device) + " (" + why +
                                                    "; lower NPU_SIM_DEVICE_MEMORY or free host memory)");
  }
  *segment = SharedSegment{base, size, fd, nextSerial.fetch_add(1)};
  return ACL_SUCCESS;
}

void destroySharedSegment(const SharedSegment& segment) {
  {
    IpcState& st = state();
    std::lock_guard<std::mutex> lock(st.mutex);
    auto it = st.slotOfSerial.find(segment.serial);
    if (it != st.slotOfSerial.end()) {
      st.directory->segments[it->second].store(0, std::memory_order_release);
      st.segmentSlots.give(it->second);
      st.slotOfSerial.erase(it);
    }
  }
  munmap(segment.base, segment.size);
  close(segment.fd);
}

aclError ipcDescribe(const void* ptr, size_t size, IpcBufferDesc* desc) {
  if (desc == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "ipcDescribe: desc is null");
  MemoryRange range = findMemoryRange(ptr);
  uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
  if (range.location != ACL_MEM_LOCATION_DEVICE || range.imported || range.fd < 0) {
    return fail(ACL_ERROR_INVALID_PARAM,
                "aclrtIpcMemGetExportKey: the memory is not a device allocation of this process (memory from a "
                "pluggable allocator or mapped from another process cannot be exported)");
  }
  if (size > range.base + range.size - address) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtIpcMemGetExportKey: " + std::to_string(size) +
                                             " bytes run past the end of the device allocation");
  }
  IpcState& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  if (aclError rc = ensureDirectory(st, "aclrtIpcMemGetExportKey")) return rc;
  auto it = st.slotOfSerial.find(range.serial);
  if (it == st.slotOfSerial.end()) {
    uint32_t slot = 0;
    if (!st.segmentSlots.take(&slot)) {
      return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtIpcMemGetExportKey: more than " +
                                                      std::to_string(kSegmentSlots) + " device allocations exported");
    }
    st.directory->segments[slot].store(range.serial, std::memory_order_release);
    it = st.slotOfSerial.emplace(range.serial, slot).first;
  }
  IpcBufferDesc d;
  d.pid = getpid();
  d.device = range.device;
  d.segmentFd = range.fd;
  d.directoryFd = st.directoryFd;
  d.directoryInode = st.directoryInode;
  struct stat info {};
  fstat(range.fd, &info);
  d.segmentInode = info.st_ino;
  d.serial = range.serial;
  d.segmentSize = range.size;
  d.offset = address - range.base;
  d.size = size;
  d.segmentSlot = it->second;
  *desc = d;
  return ACL_SUCCESS;
}

aclError ipcOpenPeer(const IpcBufferDesc& desc, void** ptr) {
  if (ptr == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "ipcOpenPeer: ptr is null");
  IpcState& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  if (desc.pid == getpid()) {
    return fail(ACL_ERROR_INVALID_PARAM, "ipcOpenPeer: the buffer belongs to this process");
  }
  ImportedSegment* seg = nullptr;
  if (aclError rc = importSegment(st, desc, "ipcOpenPeer", &seg)) return rc;
  seg->cached = true;
  *ptr = static_cast<char*>(seg->file.base) + desc.offset;
  return ACL_SUCCESS;
}

aclError ipcExportInUse(const char* key, int64_t* inUse) {
  IpcBufferDesc d;
  if (inUse == nullptr || !parseKey(key, &d) || d.counterSlot == 0) {
    return fail(ACL_ERROR_INVALID_PARAM, "ipcExportInUse: not an IPC memory key");
  }
  IpcState& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  if (d.pid != getpid() || st.directory == nullptr || d.directoryInode != st.directoryInode) {
    return fail(ACL_ERROR_INVALID_PARAM, "ipcExportInUse: the key was not exported by this process");
  }
  *inUse = st.directory->counters[d.counterSlot].load(std::memory_order_acquire);
  return ACL_SUCCESS;
}

aclError ipcForwardKey(const char* key) {
  IpcBufferDesc d;
  if (!parseKey(key, &d) || d.counterSlot == 0) return fail(ACL_ERROR_INVALID_PARAM, "ipcForwardKey: not an IPC memory key");
  IpcState& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  if (st.importedKeys.count(key) == 0) {
    return fail(ACL_ERROR_INVALID_PARAM, "ipcForwardKey: the key is not imported in this process");
  }
  std::atomic<int64_t>* counter = nullptr;
  if (aclError rc = holderCount(st, d, "ipcForwardKey", &counter)) return rc;
  // This process still holds the key, so the count is positive and the exporter keeps the block.
  counter->fetch_add(1, std::memory_order_acq_rel);
  return ACL_SUCCESS;
}

aclError ipcReleaseKey(const char* key) {
  IpcBufferDesc d;
  if (!parseKey(key, &d) || d.counterSlot == 0) return fail(ACL_ERROR_INVALID_PARAM, "ipcReleaseKey: not an IPC memory key");
  IpcState& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  std::atomic<int64_t>* counter = nullptr;
  if (aclError rc = holderCount(st, d, "ipcReleaseKey", &counter)) return rc;
  counter->fetch_sub(1, std::memory_order_acq_rel);
  return ACL_SUCCESS;
}

bool ipcIsImported(const void* ptr) { return findMemoryRange(ptr).imported; }

int32_t ipcKeyPid(const char* key) {
  IpcBufferDesc d;
  return parseKey(key, &d) ? d.pid : 0;
}

IpcCounts ipcCounts() {
  IpcState& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  IpcCounts counts;
  counts.importedSegments = st.imported.size();
  counts.openExportKeys = st.openKeys.size();
  counts.ipcEvents = st.eventSlots.inUse(0);
  return counts;
}

aclError ipcCreateEventSlot(IpcEventSlot** slot, uint32_t* index) {
  IpcState& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  if (aclError rc = ensureDirectory(st, "aclrtCreateEventWithFlag")) return rc;
  if (!st.eventSlots.take(index)) {
    return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtCreateEventWithFlag: more than " + std::to_string(kEventSlots) +
                                                    " interprocess events alive; destroy some first");
  }
  IpcEventSlot& s = st.directory->events[*index];
  s.recorded.store(0);
  s.completed.store(0);
  *slot = &s;
  return ACL_SUCCESS;
}

void ipcReleaseEventSlot(uint32_t index) {
  IpcState& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  st.eventSlots.give(index);
}

aclError ipcEventHandle(uint32_t index, aclrtIpcEventHandle* handle) {
  IpcState& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  EventHandleData data{kDirectoryMagic, getpid(), st.directoryFd, st.directoryInode, index};
  std::memset(handle, 0, sizeof(*handle));
  std::memcpy(handle->reserved, &data, sizeof(data));
  return ACL_SUCCESS;
}

aclError ipcOpenEventSlot(const aclrtIpcEventHandle& handle, IpcEventSlot** slot) {
  EventHandleData data;
  std::memcpy(&data, handle.reserved, sizeof(data));
  if (data.magic != kDirectoryMagic || data.slot >= kEventSlots) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtIpcOpenEventHandle: not an NPU interprocess event handle");
  }
  IpcState& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  Directory* dir = nullptr;
  if (aclError rc = peerDirectory(st, data.pid, data.directoryFd, data.directoryInode, "aclrtIpcOpenEventHandle",
                                  &dir)) {
    return rc;
  }
  *slot = &dir->events[data.slot];
  return ACL_SUCCESS;
}

void sharedWait(const std::atomic<uint32_t>* word, uint32_t expected, int timeoutMs) {
  struct timespec timeout {timeoutMs / 1000, (timeoutMs % 1000) * 1000000L};
  syscall(SYS_futex, reinterpret_cast<const uint32_t*>(word), FUTEX_WAIT, expected, &timeout, nullptr, 0);
}

void sharedWake(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
}

}  // namespace npurt

using npurt::fail;

extern "C" {

aclError aclrtIpcMemGetExportKey(void* devPtr, size_t size, char* key, size_t len, uint64_t flag) {
  if (devPtr == nullptr || key == nullptr) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtIpcMemGetExportKey: devPtr and key must not be null");
  }
  if (len < ACL_IPC_MEM_KEY_LEN) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtIpcMemGetExportKey: len must be at least ACL_IPC_MEM_KEY_LEN (" +
                                             std::to_string(ACL_IPC_MEM_KEY_LEN) + ")");
  }
  npurt::IpcBufferDesc desc;
  if (aclError rc = npurt::ipcDescribe(devPtr, size, &desc)) return rc;
  npurt::IpcState& st = npurt::state();
  std::lock_guard<std::mutex> lock(st.mutex);
  if (!st.counterSlots.take(&desc.counterSlot)) {
    return fail(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtIpcMemGetExportKey: more than " +
                                                    std::to_string(npurt::kCounterSlots) +
                                                    " export keys open; close keys importers released "
                                                    "(torch.npu.ipc_collect())");
  }
  // The key counts its importer from now: the exporter may drop its tensor before the importer opens it.
  st.directory->counters[desc.counterSlot].store(1, std::memory_order_release);
  st.openKeys[desc.counterSlot] = desc.serial;
  std::string text = npurt::formatKey(desc);
  std::memcpy(key, text.c_str(), text.size() + 1);
  return ACL_SUCCESS;
}

aclError aclrtIpcMemImportByKey(void** devPtr, const char* key, uint64_t flag) {
  if (devPtr == nullptr) return fail(ACL_ERROR_INVALID_PARAM, "aclrtIpcMemImportByKey: devPtr is null");
  *devPtr = nullptr;
  npurt::IpcBufferDesc desc;
  if (!npurt::parseKey(key, &desc) || desc.counterSlot == 0) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtIpcMemImportByKey: not a key from aclrtIpcMemGetExportKey");
  }
  if (aclError rc = npurt::checkDevice(desc.device, "aclrtIpcMemImportByKey")) return rc;
  npurt::IpcState& st = npurt::state();
  std::lock_guard<std::mutex> lock(st.mutex);
  if (desc.pid == getpid()) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtIpcMemImportByKey: the key was exported by this process; use the "
                                         "memory directly");
  }
  if (st.importedKeys.count(key) != 0) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtIpcMemImportByKey: the key is already imported in this process; "
                                         "close it first or reuse the returned address");
  }
  npurt::ImportedSegment* seg = nullptr;
  if (aclError rc = npurt::importSegment(st, desc, "aclrtIpcMemImportByKey", &seg)) return rc;
  ++seg->imports;
  st.importedKeys[key] = {desc.pid, desc.serial};
  *devPtr = static_cast<char*>(seg->file.base) + desc.offset;
  return ACL_SUCCESS;
}

aclError aclrtIpcMemClose(const char* key) {
  npurt::IpcBufferDesc desc;
  if (!npurt::parseKey(key, &desc) || desc.counterSlot == 0) {
    return fail(ACL_ERROR_INVALID_PARAM, "aclrtIpcMemClose: not a key from aclrtIpcMemGetExportKey");
  }
  npurt::IpcState& st = npurt::state();
  std::lock_guard<std::mutex> lock(st.mutex);
  if (desc.pid == getpid()) {
    auto it = st.openKeys.find(desc.counterSlot);
    if (it == st.openKeys.end() || it->second != desc.serial || desc.directoryInode != st.directoryInode) {
      return fail(ACL_ERROR_INVALID_PARAM, "aclrtIpcMemClose: the key is not open in this process");
    }
    int64_t holders = st.directory->counters[desc.counterSlot].load(std::memory_order_acquire);
    if (holders > 0) {
      return fail(ACL_ERROR_RT_MEMORY_IN_USE, "aclrtIpcMemClose: " + std::to_string(holders) +
                                                  " importer(s) still hold the memory");
    }
    st.openKeys.erase(it);
    st.counterSlots.give(desc.counterSlot);
    return ACL_SUCCESS;
  }
  std::atomic<int64_t>* counter = nullptr;
  if (aclError rc = npurt::keyCounter(st, desc, "aclrtIpcMemClose", &counter)) return rc;
  auto imported = st.importedKeys.find(key);
  if (imported != st.importedKeys.end()) {
    auto seg = st.imported.find(imported->second);
    st.importedKeys.erase(imported);
    if (seg != st.imported.end() && --seg->second.imports == 0 && !seg->second.cached) {
      npurt::unregisterImportedRange(seg->second.file.base);
      munmap(seg->second.file.base, seg->second.file.size);
      st.imported.erase(seg);
    }
  }
  // A key received but never imported (the storage was already open here) is released too.
  counter->fetch_sub(1, std::memory_order_acq_rel);
  return ACL_SUCCESS;
}

}  // extern "C"
