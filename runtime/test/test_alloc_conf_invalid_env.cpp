// A bad PYTORCH_NPU_ALLOC_CONF makes every allocator call fail with the parse error.
#include "allocator_checks.h"

namespace {

void allocatorCallsExplainTheConf() {
  void* ptr = nullptr;
  EXPECT(npurt::cacheMalloc(&ptr, 16, 0, nullptr) == ACL_ERROR_INVALID_PARAM);
  EXPECT(contains(aclGetRecentErrMsg(), "PYTORCH_NPU_ALLOC_CONF: unknown option 'bogus'"));
  npurt::DeviceStats stats;
  EXPECT(npurt::cacheGetStats(0, &stats) == ACL_ERROR_INVALID_PARAM);
  npurt::AllocatorConfig config;
  EXPECT(npurt::cacheGetConfig(&config) == ACL_ERROR_INVALID_PARAM);
  EXPECT_OK(aclrtMalloc(&ptr, 16, 0));  // the raw runtime is unaffected
  EXPECT_OK(aclrtFree(ptr));
}

}  // namespace

int main() {
  setenv("PYTORCH_NPU_ALLOC_CONF", "bogus:1", 1);
  RUN(allocatorCallsExplainTheConf);
  return 0;
}
