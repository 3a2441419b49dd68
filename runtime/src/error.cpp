#include "error.h"

#include <utility>

namespace npurt {
namespace {
thread_local std::string recentErrMsg;
}

aclError fail(aclError code, std::string message) {
  recentErrMsg = std::move(message);
  return code;
}

}  // namespace npurt

extern "C" const char* aclGetRecentErrMsg(void) { return npurt::recentErrMsg.c_str(); }
