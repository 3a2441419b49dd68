// Returning from main while streams and the AI-core pool are busy must neither hang
// nor crash: the runtime's singletons are leaked on purpose, so static destructors
// never tear down state a worker thread is still using.
#include "expect.h"
#include "kernels.h"
#include "npurt/caching_allocator.h"

namespace {

void leaveWorkQueued() {
  for (uint32_t index : {0u, 1u, 33u}) {
    aclrtStream s = nullptr;
    EXPECT_OK(aclrtGetStreamByIndex(0, index, &s));
    int32_t ms = 2000;
    EXPECT_OK(aclrtLaunchKernel(sleepKernel, 8, &ms, sizeof(ms), "sleep", s));
    aclrtStream owner = nullptr;
    EXPECT_OK(aclrtGetStreamByIndex(0, 2, &owner));
    void* ptr = nullptr;
    EXPECT_OK(npurt::cacheMalloc(&ptr, 4096, 0, owner));
    EXPECT_OK(npurt::cacheRecordStream(ptr, s));  // a free waiting on the busy stream
    EXPECT_OK(npurt::cacheFree(ptr));
  }
}

}  // namespace

int main() {
  RUN(leaveWorkQueued);
  return 0;  // exits at once; the sleeping kernels are abandoned with the process
}
