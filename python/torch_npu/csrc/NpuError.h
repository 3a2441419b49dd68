// torch_npu's error codes, attached to every error raised to users:
// "ERR<submodule 2 digits><code 3 digits> <submodule> <meaning>", e.g.
// "ERR00007 PTA feature not supported" (DESIGN.md section 6).
#pragma once

#include <c10/util/Exception.h>

#include <string>

#include "npurt/acl_rt.h"

namespace torch_npu {

enum class SubModule { PTA = 0, OPS = 1, DIST = 2, GRAPH = 3, PROF = 4 };

enum class ErrCode {
  PARAM = 1,
  TYPE = 2,
  VALUE = 3,
  PTR = 4,
  INTERNAL = 5,
  MEMORY = 6,
  NOT_SUPPORT = 7,
  NOT_FOUND = 8,
  UNAVAIL = 9,
  TIMEOUT = 11,
  ACL = 100,
  HCCL = 200,
};

// "ERR00007 PTA feature not supported"
std::string errCode(SubModule sub, ErrCode code);

inline std::string ptaErr(ErrCode code) { return errCode(SubModule::PTA, code); }

}  // namespace torch_npu

// Checks an aclError; on failure raises with the runtime's message and an ACL code.
#define NPU_CHECK_ACL(expr)                                                                  \
  do {                                                                                       \
    aclError _npu_status = (expr);                                                           \
    TORCH_CHECK(_npu_status == ACL_SUCCESS, #expr, " failed with ACL error ", _npu_status, \
                ": ", aclGetRecentErrMsg(), "\n",                                            \
                ::torch_npu::errCode(::torch_npu::SubModule::PTA, ::torch_npu::ErrCode::ACL)); \
  } while (0)
