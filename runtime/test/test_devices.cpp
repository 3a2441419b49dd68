// The default device table (no simulator variables set): 8 Ascend910B1 with 64 GiB,
// or less when the host cannot back that much.
#include <algorithm>
#include <thread>

#include "expect.h"

namespace {

void defaultTable() {
  uint32_t count = 0;
  EXPECT_OK(aclrtGetDeviceCount(&count));
  EXPECT(count == 8);
  aclrtDeviceProp prop;
  EXPECT_OK(aclrtGetDeviceProperties(7, &prop));
  EXPECT(std::strcmp(prop.name, "Ascend910B1") == 0);
  size_t hostUsed = 0, hostLimit = 0;
  EXPECT_OK(aclrtGetHostMemInfo(&hostUsed, &hostLimit));
  EXPECT(prop.totalGlobalMem == std::min(size_t(64) << 30, hostLimit));
  EXPECT(hostLimit >= (size_t(256) << 20));
  EXPECT(prop.cubeCoreNum == 24 && prop.vectorCoreNum == 48);
  EXPECT(prop.l2CacheSize == (size_t(192) << 20));
  EXPECT(prop.l1Size == 512 * 1024 && prop.l0aSize == 64 * 1024 && prop.l0bSize == 64 * 1024);
  EXPECT(prop.l0cSize == 128 * 1024 && prop.ubSize == 192 * 1024);
  EXPECT(prop.cubeFreqGHz > 1.84 && prop.cubeFreqGHz < 1.86);
}

void currentDeviceIsPerThread() {
  EXPECT_OK(aclrtSetDevice(3));
  int32_t other = -1;
  std::thread([&] { EXPECT_OK(aclrtGetDevice(&other)); }).join();
  EXPECT(other == 0);
  int32_t mine = -1;
  EXPECT_OK(aclrtGetDevice(&mine));
  EXPECT(mine == 3);
  EXPECT_OK(aclrtSetDevice(0));
}

void memInfoFollowsRawAllocations() {
  size_t freeBefore = 0, total = 0, freeAfter = 0;
  EXPECT_OK(aclrtGetMemInfo(2, &freeBefore, &total));
  EXPECT(freeBefore == total);
  void* ptr = nullptr;
  EXPECT_OK(aclrtMalloc(&ptr, 1000, 2));  // rounded to 512 B
  EXPECT_OK(aclrtGetMemInfo(2, &freeAfter, &total));
  EXPECT(freeBefore - freeAfter == 1024);
  EXPECT_OK(aclrtFree(ptr));
  EXPECT_OK(aclrtGetMemInfo(2, &freeAfter, &total));
  EXPECT(freeAfter == freeBefore);
}

void pointerAttributesByRange() {
  void* dev = nullptr;
  void* pinned = nullptr;
  EXPECT_OK(aclrtMalloc(&dev, 4096, 5));
  EXPECT_OK(aclrtMallocHost(&pinned, 100));
  aclrtMemLocation location;
  int32_t device = -7;
  EXPECT_OK(aclrtPointerGetAttributes(static_cast<char*>(dev) + 4000, &location, &device));
  EXPECT(location == ACL_MEM_LOCATION_DEVICE && device == 5);
  EXPECT_OK(aclrtPointerGetAttributes(static_cast<char*>(pinned) + 50, &location, &device));
  EXPECT(location == ACL_MEM_LOCATION_HOST_PINNED && device == -1);
  int onStack = 0;
  EXPECT_OK(aclrtPointerGetAttributes(&onStack, &location, &device));
  EXPECT(location == ACL_MEM_LOCATION_UNREGISTERED);
  EXPECT_OK(aclrtFree(dev));
  EXPECT_OK(aclrtPointerGetAttributes(dev, &location, &device));
  EXPECT(location == ACL_MEM_LOCATION_UNREGISTERED);
  EXPECT_OK(aclrtFreeHost(pinned));
}

}  // namespace

int main() {
  unsetenv("NPU_SIM_DEVICE_COUNT");
  unsetenv("NPU_SIM_DEVICE_MEMORY");
  unsetenv("ASCEND_RT_VISIBLE_DEVICES");
  RUN(defaultTable);
  RUN(currentDeviceIsPerThread);
  RUN(memInfoFollowsRawAllocations);
  RUN(pointerAttributesByRange);
  return 0;
}
