// IPC memory and interprocess events between a process and a forked child.
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "expect.h"
#include "kernels.h"
#include "npurt/ipc.h"

namespace {

// Runs `body` in a forked child; returns its exit status (0 when body returned true).
template <typename Body>
int inChild(Body body) {
  pid_t pid = fork();
  if (pid == 0) _exit(body() ? 0 : 1);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

void importerSeesAndWritesTheExportersBytes() {
  void* dev = nullptr;
  EXPECT_OK(aclrtMalloc(&dev, 1 << 20, 0));
  auto* bytes = static_cast<unsigned char*>(dev);
  for (int i = 0; i < 8192; ++i) bytes[4096 + i] = static_cast<unsigned char>(i);
  char key[ACL_IPC_MEM_KEY_LEN];
  EXPECT_OK(aclrtIpcMemGetExportKey(bytes + 4096, 8192, key, sizeof(key), 0));
  int status = inChild([&] {
    void* mine = nullptr;
    if (aclrtIpcMemImportByKey(&mine, key, 0) != ACL_SUCCESS) return false;
    auto* view = static_cast<unsigned char*>(mine);
    if (view == bytes + 4096) return false;  // a fresh mapping, not the inherited one
    for (int i = 0; i < 8192; ++i) {
      if (view[i] != static_cast<unsigned char>(i)) return false;
    }
    aclrtMemLocation location;
    int32_t device = -1;
    aclrtPointerGetAttributes(view, &location, &device);
    if (location != ACL_MEM_LOCATION_DEVICE || device != 0) return false;
    std::memset(view, 0x5a, 8192);
    return aclrtIpcMemClose(key) == ACL_SUCCESS && npurt::ipcCounts().importedSegments == 0;
  });
  EXPECT(status == 0);
  EXPECT(bytes[4096] == 0x5a && bytes[4096 + 8191] == 0x5a && bytes[4095] == 0);
  int64_t holders = -1;
  EXPECT_OK(npurt::ipcExportInUse(key, &holders));
  EXPECT(holders == 0);
  EXPECT_OK(aclrtIpcMemClose(key));
  EXPECT_OK(aclrtFree(dev));
}

void exporterCannotCloseAKeyStillHeld() {
  void* dev = nullptr;
  EXPECT_OK(aclrtMalloc(&dev, 4096, 0));
  char key[ACL_IPC_MEM_KEY_LEN];
  EXPECT_OK(aclrtIpcMemGetExportKey(dev, 4096, key, sizeof(key), 0));
  EXPECT(aclrtIpcMemClose(key) == ACL_ERROR_RT_MEMORY_IN_USE);
  EXPECT(contains(aclGetRecentErrMsg(), "importer"));
  // An importer that had the memory open already releases the key without importing it.
  EXPECT(inChild([&] { return aclrtIpcMemClose(key) == ACL_SUCCESS; }) == 0);
  EXPECT_OK(aclrtIpcMemClose(key));
  EXPECT(aclrtIpcMemClose(key) == ACL_ERROR_INVALID_PARAM);  // already closed
  EXPECT_OK(aclrtFree(dev));
}

void forwardedKeyCountsOneMoreHolder() {
  void* dev = nullptr;
  EXPECT_OK(aclrtMalloc(&dev, 4096, 0));
  char key[ACL_IPC_MEM_KEY_LEN];
  EXPECT_OK(aclrtIpcMemGetExportKey(dev, 4096, key, sizeof(key), 0));
  EXPECT(npurt::ipcForwardKey(key) == ACL_ERROR_INVALID_PARAM);  // only an importer sends a key on
  int64_t holders = -1;
  int status = inChild([&] {
    void* mine = nullptr;
    if (aclrtIpcMemImportByKey(&mine, key, 0) != ACL_SUCCESS) return false;
    if (npurt::ipcForwardKey(key) != ACL_SUCCESS) return false;  // to a receiver that has it open already:
    if (npurt::ipcReleaseKey(key) != ACL_SUCCESS) return false;  // ...which releases it at once
    if (npurt::ipcForwardKey(key) != ACL_SUCCESS) return false;  // to one that keeps it
    return aclrtIpcMemClose(key) == ACL_SUCCESS;
  });
  EXPECT(status == 0);
  EXPECT_OK(npurt::ipcExportInUse(key, &holders));
  EXPECT(holders == 1);  // the last receiver still holds it
  EXPECT(aclrtIpcMemClose(key) == ACL_ERROR_RT_MEMORY_IN_USE);
  EXPECT_OK(npurt::ipcReleaseKey(key));  // the key came back here: released by its exporter
  EXPECT_OK(npurt::ipcExportInUse(key, &holders));
  EXPECT(holders == 0);
  EXPECT_OK(aclrtIpcMemClose(key));
  EXPECT(npurt::ipcReleaseKey(key) == ACL_ERROR_INVALID_PARAM);  // closed
  EXPECT(npurt::ipcReleaseKey("not a key") == ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclrtFree(dev));
}

void keyOfFreedMemoryFailsToImport() {
  void* dev = nullptr;
  EXPECT_OK(aclrtMalloc(&dev, 4096, 0));
  char key[ACL_IPC_MEM_KEY_LEN];
  EXPECT_OK(aclrtIpcMemGetExportKey(dev, 4096, key, sizeof(key), 0));
  EXPECT_OK(aclrtFree(dev));
  int status = inChild([&] {
    void* mine = nullptr;
    return aclrtIpcMemImportByKey(&mine, key, 0) == ACL_ERROR_INVALID_PARAM && mine == nullptr &&
           contains(aclGetRecentErrMsg(), "freed");
  });
  EXPECT(status == 0);
}

void badKeysAndPointers() {
  void* mine = nullptr;
  char key[ACL_IPC_MEM_KEY_LEN];
  EXPECT(aclrtIpcMemImportByKey(&mine, "not a key", 0) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtIpcMemImportByKey(nullptr, "x", 0) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtIpcMemClose("npuipc1:1") == ACL_ERROR_INVALID_PARAM);
  int onHost = 0;
  EXPECT(aclrtIpcMemGetExportKey(&onHost, 4, key, sizeof(key), 0) == ACL_ERROR_INVALID_PARAM);
  void* dev = nullptr;
  EXPECT_OK(aclrtMalloc(&dev, 4096, 0));
  EXPECT(aclrtIpcMemGetExportKey(dev, 4096, key, 16, 0) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtIpcMemGetExportKey(dev, 1 << 20, key, sizeof(key), 0) == ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclrtIpcMemGetExportKey(dev, 4096, key, sizeof(key), 0));
  EXPECT(aclrtIpcMemImportByKey(&mine, key, 0) == ACL_ERROR_INVALID_PARAM);  // own key
  EXPECT(contains(aclGetRecentErrMsg(), "this process"));
  EXPECT(inChild([&] { return aclrtIpcMemClose(key) == ACL_SUCCESS; }) == 0);
  EXPECT_OK(aclrtIpcMemClose(key));
  EXPECT_OK(aclrtFree(dev));
}

void eventRecordedHereIsWaitedForThere() {
  aclrtEvent event = nullptr;
  EXPECT(aclrtCreateEventWithFlag(&event, ACL_EVENT_IPC | ACL_EVENT_TIME_LINE) == ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclrtCreateEventWithFlag(&event, ACL_EVENT_IPC));
  aclrtIpcEventHandle handle;
  EXPECT_OK(aclrtIpcGetEventHandle(event, &handle));
  aclrtStream s = nullptr;
  EXPECT_OK(aclrtGetStreamByIndex(0, 5, &s));
  EXPECT_OK(launchSleep(s, 300));
  EXPECT_OK(aclrtRecordEvent(event, s));
  auto start = std::chrono::steady_clock::now();
  int status = inChild([&] {
    aclrtEvent opened = nullptr;
    if (aclrtIpcOpenEventHandle(handle, &opened) != ACL_SUCCESS) return false;
    int32_t done = 1;
    aclrtQueryEventStatus(opened, &done);
    if (done) return false;  // the parent's sleep is still queued before the record
    aclrtStream mine = nullptr;
    aclrtGetStreamByIndex(0, 7, &mine);
    if (aclrtStreamWaitEvent(mine, opened) != ACL_SUCCESS) return false;
    if (aclrtSynchronizeStream(mine) != ACL_SUCCESS) return false;
    aclrtQueryEventStatus(opened, &done);
    return done == 1 && aclrtDestroyEvent(opened) == ACL_SUCCESS;
  });
  EXPECT(status == 0);
  EXPECT(secondsSince(start) > 0.2);
  aclrtEvent plain = nullptr;
  EXPECT_OK(aclrtCreateEventWithFlag(&plain, 0));
  EXPECT(aclrtIpcGetEventHandle(plain, &handle) == ACL_ERROR_INVALID_PARAM);
  std::memset(&handle, 0, sizeof(handle));
  aclrtEvent bogus = nullptr;
  EXPECT(aclrtIpcOpenEventHandle(handle, &bogus) == ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclrtDestroyEvent(plain));
  EXPECT_OK(aclrtDestroyEvent(event));
  EXPECT(npurt::ipcCounts().ipcEvents == 0);
}

}  // namespace

int main() {
  RUN(importerSeesAndWritesTheExportersBytes);
  RUN(exporterCannotCloseAKeyStillHeld);
  RUN(forwardedKeyCountsOneMoreHolder);
  RUN(keyOfFreedMemoryFailsToImport);
  RUN(badKeysAndPointers);
  RUN(eventRecordedHereIsWaitedForThere);
  return 0;
}
