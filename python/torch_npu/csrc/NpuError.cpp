#include "torch_npu/csrc/NpuError.h"

#include <cstdio>

namespace torch_npu {
namespace {

const char* subModuleName(SubModule sub) {
  switch (sub) {
    case SubModule::PTA: return "PTA";
    case SubModule::OPS: return "OPS";
    case SubModule::DIST: return "DIST";
    case SubModule::GRAPH: return "GRAPH";
    case SubModule::PROF: return "PROF";
  }
  return "PTA";
}

const char* meaning(ErrCode code) {
  switch (code) {
    case ErrCode::PARAM: return "invalid parameter";
    case ErrCode::TYPE: return "invalid type";
    case ErrCode::VALUE: return "invalid value";
    case ErrCode::PTR: return "invalid pointer";
    case ErrCode::INTERNAL: return "internal error";
    case ErrCode::MEMORY: return "memory error";
    case ErrCode::NOT_SUPPORT: return "feature not supported";
    case ErrCode::NOT_FOUND: return "resource not found";
    case ErrCode::UNAVAIL: return "resource unavailable";
    case ErrCode::TIMEOUT: return "timeout error";
    case ErrCode::ACL: return "call acl api failed";
    case ErrCode::HCCL: return "call hccl api failed";
  }
  return "internal error";
}

}  // namespace

std::string errCode(SubModule sub, ErrCode code) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "ERR%02d%03d %s %s", static_cast<int>(sub), static_cast<int>(code),
                subModuleName(sub), meaning(code));
  return buf;
}

}  // namespace torch_npu
