// torch.autocast("npu"): torch_npu's cast policy on AutocastPrivateUse1, which is CUDA's: matmul, linear,
// conv and attention (npu_fusion_attention too) in the lower precision; exp/log/pow, norms, softmax,
// losses and range-sensitive reductions in float32; mixed-precision binary ops promoted; and
// binary_cross_entropy banned, since its inputs are usually a float16 sigmoid's saturated output.
// Ops not listed fall through the AutocastPrivateUse1 key unchanged.
#include <ATen/autocast_mode.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include "torch_npu/csrc/NpuError.h"

namespace torch_npu {
namespace {

using at::autocast::CastPolicy;
// AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE spells its signatures with ATen's unqualified names.
using at::IntArrayRef;
using at::Scalar;
using at::ScalarType;
using at::Tensor;

// torch.cuda's message, so code written against CUDA reads the same advice.
at::Tensor binaryCrossEntropyBanned(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, int64_t) {
  TORCH_CHECK(false,
              "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
              "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
              "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
              "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
              "safe to autocast.\n",
              errCode(SubModule::OPS, ErrCode::NOT_SUPPORT));
}

using FusionAttentionFn = std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, int64_t, int64_t, int64_t>(
    const at::Tensor&, const at::Tensor&, const at::Tensor&, int64_t, c10::string_view,
    const std::optional<at::Tensor>&, const std::optional<at::Tensor>&, const std::optional<at::Tensor>&, double,
    double, int64_t, int64_t, int64_t, at::OptionalIntArrayRef, at::OptionalIntArrayRef, at::OptionalIntArrayRef,
    int64_t, bool, bool);

// The redispatch target the autocast wrapper calls (below the Autocast key) after casting the inputs.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, int64_t, int64_t, int64_t> callFusionAttention(
    const at::Tensor& query, const at::Tensor& key, const at::Tensor& value, int64_t headNum,
    c10::string_view inputLayout, const std::optional<at::Tensor>& pse, const std::optional<at::Tensor>& paddingMask,
    const std::optional<at::Tensor>& attenMask, double scale, double keepProb, int64_t preTokens, int64_t nextTokens,
    int64_t innerPrecise, at::OptionalIntArrayRef prefix, at::OptionalIntArrayRef seqQ, at::OptionalIntArrayRef seqKv,
    int64_t sparseMode, bool genMaskParallel, bool sync) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("npu::npu_fusion_attention", "")
                             .typed<FusionAttentionFn>();
  return op.call(query, key, value, headNum, inputLayout, pse, paddingMask, attenMask, scale, keepProb, preTokens,
                 nextTokens, innerPrecise, prefix, seqQ, seqKv, sparseMode, genMaskParallel, sync);
}

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
#define NPU_LOWER_PRECISION_FP(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define NPU_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define NPU_FP32_SET_OPT_DTYPE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define NPU_DIFFERENT_REDISPATCH_SIGNATURE(...) KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE(__VA_ARGS__)
#define NPU_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_LOWER_PRECISION_FP(NPU_LOWER_PRECISION_FP)
  AT_FORALL_FP32(NPU_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(NPU_FP32_SET_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(NPU_DIFFERENT_REDISPATCH_SIGNATURE)
  AT_FORALL_PROMOTE(NPU_PROMOTE)
#undef NPU_LOWER_PRECISION_FP
#undef NPU_FP32
#undef NPU_FP32_SET_OPT_DTYPE
#undef NPU_DIFFERENT_REDISPATCH_SIGNATURE
#undef NPU_PROMOTE
  m.impl(TORCH_SELECTIVE_NAME("aten::binary_cross_entropy"), TORCH_FN(binaryCrossEntropyBanned));
}

TORCH_LIBRARY_IMPL(npu, AutocastPrivateUse1, m) {
  m.impl("npu_fusion_attention",
         &at::autocast::WrapFunction<CastPolicy::lower_precision_fp, c10::DeviceType::PrivateUse1, FusionAttentionFn,
                                     FusionAttentionFn, &callFusionAttention>::type::call);
}

}  // namespace
}  // namespace torch_npu
