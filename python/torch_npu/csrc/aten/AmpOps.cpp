// GradScaler's two ops on the NPU: aten::_amp_foreach_non_finite_check_and_unscale_ and
// aten::_amp_update_scale_. Arguments are checked with torch's messages (so code written against
// torch.cuda reads the same errors), then each runs compiled kernels (references in
// compiler/npu_mlir/frontend/references/amp_scaling.py): found_inf, the scale and the growth tracker never leave the
// device, so a training step with a GradScaler costs no device-to-host copy until the optimizer step
// is decided.
#include <torch/library.h>

#include "torch_npu/csrc/aten/CustomOpChecks.h"
#include "torch_npu/csrc/eager/OpCommand.h"

namespace torch_npu::native {
namespace {

bool isNpu(const at::Tensor& t) { return t.device().type() == c10::DeviceType::PrivateUse1; }

void checkOneElementFloat(const at::Tensor& t, const char* name) {
  TORCH_CHECK(isNpu(t), name, " must be a NPU tensor.\n", opsErr(ErrCode::PARAM));
  TORCH_CHECK(t.numel() == 1, name, " must be a 1-element tensor.\n", opsErr(ErrCode::PARAM));
  TORCH_CHECK(t.scalar_type() == at::kFloat, name, " must be a float tensor.\n", opsErr(ErrCode::TYPE));
}

void ampForeachNonFiniteCheckAndUnscale(at::TensorList scaledGrads, at::Tensor& foundInf, const at::Tensor& invScale) {
  if (scaledGrads.empty()) return;
  checkOneElementFloat(invScale, "inv_scale");
  checkOneElementFloat(foundInf, "found_inf");
  const c10::Device device = scaledGrads[0].device();
  for (const at::Tensor& grad : scaledGrads) {
    TORCH_CHECK(isNpu(grad), "one of scaled_grads was not a NPU tensor.\n", opsErr(ErrCode::PARAM));
    TORCH_CHECK(grad.device() == device, "scaled_grads must be on the same device.\n", opsErr(ErrCode::PARAM));
    TORCH_CHECK(grad.layout() == at::kStrided, "scaled_grads must be strided (dense) tensors.\n",
                opsErr(ErrCode::PARAM));
    TORCH_CHECK(at::isFloatingType(grad.scalar_type()), "scaled_grads must be floating-point tensors, got ",
                grad.scalar_type(), ".\n", opsErr(ErrCode::TYPE));
  }
  TORCH_CHECK(foundInf.device() == device && invScale.device() == device,
              "found_inf and inv_scale must be on the device of scaled_grads (", device, "), got ", foundInf.device(),
              " and ", invScale.device(), ".\n", opsErr(ErrCode::PARAM));
  // One kernel per gradient: it unscales the gradient and folds its non-finite check into found_inf.
  for (const at::Tensor& grad : scaledGrads) {
    if (grad.numel() == 0) continue;
    eager::OpCommand()
        .Name("npu::_npu_amp_unscale")
        .Input(grad)
        .Input(foundInf)
        .Input(invScale)
        .Output(grad)
        .Output(foundInf)
        .Run();
  }
}

at::Tensor& ampUpdateScale(at::Tensor& currentScale, at::Tensor& growthTracker, const at::Tensor& foundInf,
                           double growthFactor, double backoffFactor, int64_t growthInterval) {
  TORCH_CHECK(isNpu(growthTracker), "growth_tracker must be a NPU tensor.\n", opsErr(ErrCode::PARAM));
  TORCH_CHECK(isNpu(currentScale), "current_scale must be a NPU tensor.\n", opsErr(ErrCode::PARAM));
  TORCH_CHECK(isNpu(foundInf), "found_inf must be a NPU tensor.\n", opsErr(ErrCode::PARAM));
  TORCH_CHECK(growthTracker.numel() == 1, "growth_tracker must be a 1-element tensor.\n", opsErr(ErrCode::PARAM));
  TORCH_CHECK(currentScale.numel() == 1, "current_scale must be a 1-element tensor.\n", opsErr(ErrCode::PARAM));
  TORCH_CHECK(foundInf.numel() == 1, "found_inf must be a 1-element tensor.\n", opsErr(ErrCode::PARAM));
  TORCH_CHECK(growthTracker.scalar_type() == at::kInt, "growth_tracker must be an int tensor.\n",
              opsErr(ErrCode::TYPE));
  TORCH_CHECK(currentScale.scalar_type() == at::kFloat, "current_scale must be a float tensor.\n",
              opsErr(ErrCode::TYPE));
  TORCH_CHECK(foundInf.scalar_type() == at::kFloat, "found_inf must be a float tensor.\n", opsErr(ErrCode::TYPE));
  TORCH_CHECK(growthTracker.device() == currentScale.device() && foundInf.device() == currentScale.device(),
              "current_scale, growth_tracker and found_inf must be on one device, got ", currentScale.device(), ", ",
              growthTracker.device(), " and ", foundInf.device(), ".\n", opsErr(ErrCode::PARAM));
  eager::OpCommand()
      .Name("npu::_npu_amp_update_scale")
      .Input(currentScale)
      .Input(growthTracker)
      .Input(foundInf)
      .Attr("scale_growth_factor", growthFactor)
      .Attr("scale_backoff_factor", backoffFactor)
      .Attr("growth_interval", growthInterval)
      .Output(currentScale)
      .Output(growthTracker)
      .Run();
  return currentScale;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_amp_foreach_non_finite_check_and_unscale_", &ampForeachNonFiniteCheckAndUnscale);
  m.impl("_amp_update_scale_", &ampUpdateScale);
}

}  // namespace
}  // namespace torch_npu::native
