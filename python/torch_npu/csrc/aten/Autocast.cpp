// torch.autocast("npu"): the same cast policies CUDA uses. Ops not listed fall
// through the AutocastPrivateUse1 key unchanged.
#include <ATen/autocast_mode.h>
#include <torch/library.h>

namespace torch_npu {
namespace {

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
#define NPU_LOWER_PRECISION_FP(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define NPU_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define NPU_FP32_SET_OPT_DTYPE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define NPU_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_LOWER_PRECISION_FP(NPU_LOWER_PRECISION_FP)
  AT_FORALL_FP32(NPU_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(NPU_FP32_SET_OPT_DTYPE)
  AT_FORALL_PROMOTE(NPU_PROMOTE)
#undef NPU_LOWER_PRECISION_FP
#undef NPU_FP32
#undef NPU_FP32_SET_OPT_DTYPE
#undef NPU_PROMOTE
}

}  // namespace
}  // namespace torch_npu
