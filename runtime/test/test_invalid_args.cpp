// Null and out-of-range arguments are rejected with a status and a message, never a crash.
#include "expect.h"
#include "kernels.h"
#include "npurt/caching_allocator.h"

namespace {

void deviceArgs() {
  EXPECT(aclrtGetDeviceCount(nullptr) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtGetDevice(nullptr) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtSetDevice(-1) == ACL_ERROR_RT_INVALID_DEVICEID);
  EXPECT(aclrtSetDevice(8) == ACL_ERROR_RT_INVALID_DEVICEID);
  EXPECT(aclrtGetDeviceProperties(0, nullptr) == ACL_ERROR_INVALID_PARAM);
  aclrtDeviceProp prop;
  EXPECT(aclrtGetDeviceProperties(9, &prop) == ACL_ERROR_RT_INVALID_DEVICEID);
  size_t a = 0, b = 0;
  EXPECT(aclrtGetMemInfo(0, nullptr, &b) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtGetMemInfo(-3, &a, &b) == ACL_ERROR_RT_INVALID_DEVICEID);
}

void memoryArgs() {
  void* ptr = nullptr;
  EXPECT(aclrtMalloc(nullptr, 16, 0) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtMalloc(&ptr, 0, 0) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtFree(nullptr) == ACL_ERROR_INVALID_PARAM);
  int onStack = 0;
  EXPECT(aclrtFree(&onStack) == ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclrtMalloc(&ptr, 16, 0));
  EXPECT_OK(aclrtFree(ptr));
  EXPECT(aclrtFree(ptr) == ACL_ERROR_INVALID_PARAM);  // double free
  EXPECT(contains(aclGetRecentErrMsg(), "already freed"));
  EXPECT(aclrtMallocHost(nullptr, 16) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtMallocHost(&ptr, SIZE_MAX) == ACL_ERROR_RT_MEMORY_ALLOCATION);
  EXPECT(aclrtFreeHost(&onStack) == ACL_ERROR_INVALID_PARAM);
  aclrtMemLocation location;
  EXPECT(aclrtPointerGetAttributes(&onStack, nullptr, nullptr) == ACL_ERROR_INVALID_PARAM);
  (void)location;
}

void copyArgs() {
  void* dev = nullptr;
  EXPECT_OK(aclrtMalloc(&dev, 1024, 0));
  char host[2048];
  EXPECT(aclrtMemcpy(dev, 1024, host, 2048, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_ERROR_INVALID_PARAM);  // > destMax
  EXPECT(aclrtMemcpy(host, 2048, dev, 2048, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_ERROR_INVALID_PARAM);  // past the end
  EXPECT(aclrtMemcpy(host, SIZE_MAX, static_cast<char*>(dev) + 512, SIZE_MAX - 256, ACL_MEMCPY_DEVICE_TO_HOST) ==
         ACL_ERROR_INVALID_PARAM);  // the end address would wrap around
  EXPECT(contains(aclGetRecentErrMsg(), "past the end"));
  EXPECT(aclrtMemcpy(host, 1024, host + 1024, 16, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_ERROR_INVALID_PARAM);
  EXPECT(contains(aclGetRecentErrMsg(), "not device memory"));
  EXPECT(aclrtMemcpy(dev, 1024, host, 16, static_cast<aclrtMemcpyKind>(9)) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtMemcpy(nullptr, 16, host, 16, ACL_MEMCPY_HOST_TO_HOST) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtMemcpyAsync(dev, 1024, dev, 16, ACL_MEMCPY_HOST_TO_DEVICE, nullptr) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtMemsetAsync(dev, 1024, 0, 2048, nullptr) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtMemsetAsync(host, 2048, 0, 16, nullptr) == ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclrtMemcpy(host, 2048, host + 1024, 16, ACL_MEMCPY_HOST_TO_HOST));
  EXPECT_OK(aclrtFree(dev));
}

void streamAndLaunchArgs() {
  aclrtStream s = nullptr;
  EXPECT(aclrtGetStreamByIndex(0, ACL_SYNC_LAUNCH_STREAM_BASE + ACL_SYNC_LAUNCH_STREAM_COUNT, &s) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtGetStreamByIndex(0, 0, nullptr) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtGetStreamByIndex(8, 0, &s) == ACL_ERROR_RT_INVALID_DEVICEID);
  EXPECT(aclrtStreamQuery(nullptr, nullptr) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtLaunchKernel(nullptr, 1, nullptr, 0, "k", nullptr) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtLaunchKernel(sleepKernel, 0, nullptr, 0, "k", nullptr) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtLaunchKernel(sleepKernel, 1, nullptr, 4, "k", nullptr) == ACL_ERROR_INVALID_PARAM);
  static char big[(64 << 10) + 1];
  EXPECT(aclrtLaunchKernel(sleepKernel, 1, big, sizeof(big), "k", nullptr) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtLaunchHostFunc(nullptr, nullptr, nullptr) == ACL_ERROR_INVALID_PARAM);
}

void eventArgs() {
  aclrtEvent event = nullptr;
  EXPECT(aclrtCreateEventWithFlag(nullptr, 0) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtCreateEventWithFlag(&event, 0x100) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtDestroyEvent(nullptr) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtRecordEvent(nullptr, nullptr) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtStreamWaitEvent(nullptr, nullptr) == ACL_ERROR_INVALID_PARAM);
  EXPECT(aclrtSynchronizeEvent(nullptr) == ACL_ERROR_INVALID_PARAM);
  int32_t complete = 0;
  EXPECT(aclrtQueryEventStatus(nullptr, &complete) == ACL_ERROR_INVALID_PARAM);
  float ms = 0;
  EXPECT(aclrtEventElapsedTime(&ms, nullptr, nullptr) == ACL_ERROR_INVALID_PARAM);
}

void allocatorArgs() {
  void* ptr = nullptr;
  EXPECT(npurt::cacheMalloc(nullptr, 16, 0, nullptr) == ACL_ERROR_INVALID_PARAM);
  EXPECT(npurt::cacheMalloc(&ptr, 16, 8, nullptr) == ACL_ERROR_RT_INVALID_DEVICEID);
  aclrtStream other = nullptr;
  EXPECT_OK(aclrtGetStreamByIndex(1, 0, &other));
  EXPECT(npurt::cacheMalloc(&ptr, 16, 0, other) == ACL_ERROR_INVALID_PARAM);  // stream of device 1
  EXPECT_OK(npurt::cacheMalloc(&ptr, 0, 0, nullptr));
  EXPECT(ptr == nullptr);
  EXPECT_OK(npurt::cacheFree(nullptr));
  int onStack = 0;
  EXPECT(npurt::cacheFree(&onStack) == ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(npurt::cacheMalloc(&ptr, 16, 0, nullptr));
  EXPECT(npurt::cacheRecordStream(ptr, nullptr) == ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(npurt::cacheFree(ptr));
  EXPECT(npurt::cacheFree(ptr) == ACL_ERROR_INVALID_PARAM);  // double free
  EXPECT(npurt::cacheSetMemoryFraction(1.5, 0) == ACL_ERROR_INVALID_PARAM);
  EXPECT(npurt::cacheSetMemoryFraction(-0.1, 0) == ACL_ERROR_INVALID_PARAM);
  EXPECT(npurt::cacheGetStats(0, nullptr) == ACL_ERROR_INVALID_PARAM);
  EXPECT(npurt::cacheEmpty(42) == ACL_ERROR_RT_INVALID_DEVICEID);
  EXPECT(npurt::cacheSnapshot(nullptr) == ACL_ERROR_INVALID_PARAM);
  EXPECT(npurt::cacheRecordHistory(1, 0, nullptr) == ACL_ERROR_INVALID_PARAM);
}

}  // namespace

int main() {
  RUN(deviceArgs);
  RUN(memoryArgs);
  RUN(copyArgs);
  RUN(streamAndLaunchArgs);
  RUN(eventArgs);
  RUN(allocatorArgs);
  return 0;
}
