// Argument checks of the custom ops' PrivateUse1 kernels (npu_rms_norm, ...): each failure names the
// op, the argument and what to pass instead, with an ERR code, before anything is compiled.
#pragma once

#include <ATen/core/Tensor.h>

#include "torch_npu/csrc/NpuError.h"

namespace torch_npu::native {

inline std::string opsErr(ErrCode code) { return errCode(SubModule::OPS, code); }

// `t` is an NPU tensor of a floating dtype the custom ops compute in (float32, float16, bfloat16).
inline void checkNpuFloating(const char* op, const char* name, const at::Tensor& t) {
  TORCH_CHECK(t.defined() && t.device().type() == c10::DeviceType::PrivateUse1, op, ": ", name, " is on ",
              t.defined() ? t.device().str() : "no device (undefined)", "; move it to the NPU with .npu()\n",
              opsErr(ErrCode::PARAM));
  at::ScalarType dtype = t.scalar_type();
  TORCH_CHECK(dtype == at::kFloat || dtype == at::kHalf || dtype == at::kBFloat16, op, ": ", name, " has dtype ",
              dtype, "; expected float32, float16 or bfloat16\n", opsErr(ErrCode::TYPE));
}

inline void checkSameDtype(const char* op, const char* name, const at::Tensor& t, const char* refName,
                           const at::Tensor& ref) {
  TORCH_CHECK(t.scalar_type() == ref.scalar_type(), op, ": ", name, " has dtype ", t.scalar_type(), ", expected ",
              ref.scalar_type(), " (the dtype of ", refName, "); convert it with .to(", refName, ".dtype)\n",
              opsErr(ErrCode::TYPE));
}

inline void checkSameShape(const char* op, const char* name, const at::Tensor& t, const char* refName,
                           c10::IntArrayRef expected) {
  TORCH_CHECK(t.sizes() == expected, op, ": ", name, " has shape ", t.sizes(), ", expected ", expected, " (",
              refName, ")\n", opsErr(ErrCode::PARAM));
}

// `dim` wrapped into [0, ndim), as torch's maybe_wrap_dim, but with our error code.
inline int64_t wrapDim(const char* op, int64_t dim, int64_t ndim) {
  TORCH_CHECK(ndim > 0 && dim >= -ndim && dim < ndim, op, ": dim ", dim, " is out of range for a tensor with ",
              ndim, " dimensions; expected a value in [", -ndim, ", ", ndim - 1, "]\n", opsErr(ErrCode::PARAM));
  return dim < 0 ? dim + ndim : dim;
}

}  // namespace torch_npu::native
