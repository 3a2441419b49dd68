// PYTORCH_NPU_ALLOC_CONF parsing: valid strings and every kind of mistake.
#include "allocator_checks.h"

namespace {

void parsesEveryKey() {
  npurt::AllocatorConfig config;
  EXPECT_OK(npurt::cacheParseConfig(
      " max_split_size_mb:64, garbage_collection_threshold:0.6,expandable_segments:True,"
      "per_process_memory_fraction:0.5 ",
      &config));
  EXPECT(config.max_split_size == 64 * kMiB);
  EXPECT(config.garbage_collection_threshold > 0.59 && config.garbage_collection_threshold < 0.61);
  EXPECT(config.expandable_segments);
  EXPECT(config.per_process_memory_fraction == 0.5);
  EXPECT_OK(npurt::cacheParseConfig("", &config));
  EXPECT(config.max_split_size == SIZE_MAX && !config.expandable_segments);
}

void rejects(const char* text, const char* expectedInMessage) {
  npurt::AllocatorConfig config;
  config.max_split_size = 7;
  EXPECT(npurt::cacheParseConfig(text, &config) == ACL_ERROR_INVALID_PARAM);
  if (!contains(aclGetRecentErrMsg(), expectedInMessage)) {
    std::fprintf(stderr, "'%s': message '%s' lacks '%s'\n", text, aclGetRecentErrMsg(), expectedInMessage);
    std::abort();
  }
  EXPECT(config.max_split_size == 7);  // untouched on failure
}

void rejectsMistakes() {
  rejects("max_split_size:64", "unknown option 'max_split_size'");
  rejects("max_split_size_mb:10", "greater than 20");
  rejects("max_split_size_mb:abc", "max_split_size_mb:abc");
  rejects("max_split_size_mb:64.5", "integer");
  rejects("garbage_collection_threshold:1.5", "strictly between 0 and 1");
  rejects("expandable_segments:maybe", "True or False");
  rejects("per_process_memory_fraction:0", "(0, 1]");
  rejects("expandable_segments", "key:value");
}

}  // namespace

int main() {
  RUN(parsesEveryKey);
  RUN(rejectsMistakes);
  return 0;
}
