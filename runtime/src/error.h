// Recording a failure for aclGetRecentErrMsg: every entry point returns through fail().
#pragma once

#include <string>

#include "npurt/acl_rt.h"

namespace npurt {

// Stores `message` as the calling thread's recent error and returns `code`.
aclError fail(aclError code, std::string message);

}  // namespace npurt
