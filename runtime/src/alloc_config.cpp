// PYTORCH_NPU_ALLOC_CONF: "key:value[,key:value...]", torch's PYTORCH_CUDA_ALLOC_CONF grammar.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "error.h"
#include "npurt/caching_allocator.h"

namespace npurt {
namespace {

constexpr const char* kKnownKeys =
    "max_split_size_mb, garbage_collection_threshold, expandable_segments, per_process_memory_fraction";

std::string trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(" \t");
  return text.substr(begin, end - begin + 1);
}

aclError badValue(const std::string& key, const std::string& value, const char* expected) {
  return fail(ACL_ERROR_INVALID_PARAM, "PYTORCH_NPU_ALLOC_CONF: " + key + ":" + value + " is invalid: " + key +
                                           " must be " + expected);
}

bool toDouble(const std::string& text, double* value) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  *value = std::strtod(text.c_str(), &end);
  return errno == 0 && *end == '\0';
}

aclError applyOption(const std::string& key, const std::string& value, AllocatorConfig* config) {
  if (key == "max_split_size_mb") {
    double mb = 0;
    // torch's lower bound: a split limit below the 20 MiB large-segment size is meaningless.
    if (!toDouble(value, &mb) || mb <= 20 || mb != static_cast<double>(static_cast<long long>(mb)) || mb > 1e12) {
      return badValue(key, value, "an integer number of MiB greater than 20");
    }
    config->max_split_size = static_cast<size_t>(mb) << 20;
  } else if (key == "garbage_collection_threshold") {
    double threshold = 0;
    if (!toDouble(value, &threshold) || threshold <= 0 || threshold >= 1) {
      return badValue(key, value, "a fraction strictly between 0 and 1, e.g. 0.8");
    }
    config->garbage_collection_threshold = threshold;
  } else if (key == "expandable_segments") {
    if (value == "True" || value == "true" || value == "1") {
      config->expandable_segments = true;
    } else if (value == "False" || value == "false" || value == "0") {
      config->expandable_segments = false;
    } else {
      return badValue(key, value, "True or False");
    }
  } else if (key == "per_process_memory_fraction") {
    double fraction = 0;
    if (!toDouble(value, &fraction) || fraction <= 0 || fraction > 1) {
      return badValue(key, value, "a fraction in (0, 1]");
    }
    config->per_process_memory_fraction = fraction;
  } else {
    return fail(ACL_ERROR_INVALID_PARAM,
                "PYTORCH_NPU_ALLOC_CONF: unknown option '" + key + "' (known options: " + kKnownKeys + ")");
  }
  return ACL_SUCCESS;
}

}  // namespace

aclError cacheParseConfig(const char* text, AllocatorConfig* config) {
  if (text == nullptr || config == nullptr) {
    return fail(ACL_ERROR_INVALID_PARAM, "cacheParseConfig: text and config must not be null");
  }
  AllocatorConfig parsed;
  std::string all(text);
  size_t start = 0;
  while (start <= all.size()) {
    size_t comma = all.find(',', start);
    if (comma == std::string::npos) comma = all.size();
    std::string item = trim(all.substr(start, comma - start));
    start = comma + 1;
    if (item.empty()) continue;
    size_t colon = item.find(':');
    if (colon == std::string::npos) {
      return fail(ACL_ERROR_INVALID_PARAM, "PYTORCH_NPU_ALLOC_CONF: '" + item +
                                               "' is not of the form key:value (e.g. max_split_size_mb:128)");
    }
    if (aclError rc = applyOption(trim(item.substr(0, colon)), trim(item.substr(colon + 1)), &parsed)) return rc;
  }
  *config = parsed;
  return ACL_SUCCESS;
}

}  // namespace npurt
