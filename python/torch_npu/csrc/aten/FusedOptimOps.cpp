// torch.optim's fused=True path on the NPU: aten::_fused_adam_, _fused_adamw_ and _fused_sgd_, one
// multi-tensor launch per dtype group (MultiTensorApply.h) of the per-tensor step compiled from its
// reference (compiler/npu_mlir/frontend/references/fused_optim.py), which reads the step count,
// grad_scale and found_inf on the device - so GradScaler + fused=True steps without a host sync, as
// on CUDA. The step's results are written straight into the caller's tensors.
#include <ATen/ops/ones.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include "torch_npu/csrc/aten/CustomOpChecks.h"
#include "torch_npu/csrc/aten/MultiTensorApply.h"

namespace torch_npu::native {
namespace {

void checkLists(const char* op, std::initializer_list<std::pair<const char*, at::TensorList>> lists,
                const at::Tensor& first) {
  for (const auto& [name, list] : lists) {
    TORCH_CHECK(list.size() == lists.begin()->second.size(), op, ": ", name, " has ", list.size(),
                " tensors, self has ", lists.begin()->second.size(), "; every list needs one per parameter\n",
                opsErr(ErrCode::PARAM));
    for (const at::Tensor& t : list) {
      TORCH_CHECK(t.device() == first.device(), op, ": ", name, " holds a tensor on ", t.device(),
                  ", the parameters are on ", first.device(), "; move every tensor to one NPU\n",
                  opsErr(ErrCode::PARAM));
    }
  }
}

// grad_scale / found_inf, or the values that leave a step unchanged: a scale of 1, nothing found.
std::pair<at::Tensor, at::Tensor> scaleAndFound(const char* op, const at::Tensor& first,
                                                const std::optional<at::Tensor>& gradScale,
                                                const std::optional<at::Tensor>& foundInf) {
  auto options = first.options().dtype(at::kFloat);
  for (const auto& [name, t] : {std::pair<const char*, const std::optional<at::Tensor>&>{"grad_scale", gradScale},
                                {"found_inf", foundInf}}) {
    if (!t.has_value() || !t->defined()) continue;
    TORCH_CHECK(t->device() == first.device() && t->numel() == 1, op, ": ", name, " must be a 1-element tensor on ",
                first.device(), ", got ", t->numel(), " elements on ", t->device(), "\n", opsErr(ErrCode::PARAM));
  }
  at::Tensor scale = gradScale.has_value() && gradScale->defined() ? *gradScale : at::ones({1}, options);
  at::Tensor found = foundInf.has_value() && foundInf->defined() ? *foundInf : at::zeros({1}, options);
  return {scale, found};
}

void fusedAdam(bool decoupled, at::TensorList self, at::TensorList grads, at::TensorList expAvgs,
               at::TensorList expAvgSqs, at::TensorList maxExpAvgSqs, at::TensorList stateSteps, double lr,
               double beta1, double beta2, double weightDecay, double eps, bool amsgrad, bool maximize,
               const std::optional<at::Tensor>& gradScale, const std::optional<at::Tensor>& foundInf) {
  const char* op = decoupled ? "_fused_adamw_" : "_fused_adam_";
  if (self.empty()) return;
  checkNpuFloating(op, "self", self[0]);
  checkLists(op, {{"self", self}, {"grads", grads}, {"exp_avgs", expAvgs}, {"exp_avg_sqs", expAvgSqs},
                  {"state_steps", stateSteps}}, self[0]);
  if (amsgrad) checkLists(op, {{"self", self}, {"max_exp_avg_sqs", maxExpAvgSqs}}, self[0]);
  auto [scale, found] = scaleAndFound(op, self[0], gradScale, foundInf);
  using Arg = MultiTensorArg;
  // Result k of the per-tensor step is written into argument writes[k]. Without amsgrad the fifth
  // result is not used (dropped); without grad_scale the unscaled gradient is the gradient itself
  // (divided by 1), so writing it leaves it as it was.
  multiTensorApply(std::string("aten::") + op, "npu::_npu_fused_adam_tensor_step",
                   {Arg::chunked(self), Arg::chunked(grads), Arg::chunked(expAvgs), Arg::chunked(expAvgSqs),
                    Arg::chunked(amsgrad ? maxExpAvgSqs : expAvgSqs), Arg::perTensor(stateSteps), Arg::shared(scale),
                    Arg::shared(found), Arg::shared(lr), Arg::shared(beta1), Arg::shared(beta2),
                    Arg::shared(weightDecay), Arg::shared(eps), Arg::shared(amsgrad), Arg::shared(maximize),
                    Arg::shared(decoupled)},
                   {0, 1, 2, 3, amsgrad ? 4 : -1}, true);
}

void fusedAdamL2(at::TensorList self, at::TensorList grads, at::TensorList expAvgs, at::TensorList expAvgSqs,
                 at::TensorList maxExpAvgSqs, at::TensorList stateSteps, double lr, double beta1, double beta2,
                 double weightDecay, double eps, bool amsgrad, bool maximize,
                 const std::optional<at::Tensor>& gradScale, const std::optional<at::Tensor>& foundInf) {
  fusedAdam(false, self, grads, expAvgs, expAvgSqs, maxExpAvgSqs, stateSteps, lr, beta1, beta2, weightDecay, eps,
            amsgrad, maximize, gradScale, foundInf);
}

void fusedAdamW(at::TensorList self, at::TensorList grads, at::TensorList expAvgs, at::TensorList expAvgSqs,
                at::TensorList maxExpAvgSqs, at::TensorList stateSteps, double lr, double beta1, double beta2,
                double weightDecay, double eps, bool amsgrad, bool maximize,
                const std::optional<at::Tensor>& gradScale, const std::optional<at::Tensor>& foundInf) {
  fusedAdam(true, self, grads, expAvgs, expAvgSqs, maxExpAvgSqs, stateSteps, lr, beta1, beta2, weightDecay, eps,
            amsgrad, maximize, gradScale, foundInf);
}

void fusedSgd(at::TensorList self, at::TensorList grads, at::TensorList momentumBuffers, double weightDecay,
              double momentum, double lr, double dampening, bool nesterov, bool maximize, bool isFirstStep,
              const std::optional<at::Tensor>& gradScale, const std::optional<at::Tensor>& foundInf) {
  const char* op = "_fused_sgd_";
  if (self.empty()) return;
  checkNpuFloating(op, "self", self[0]);
  const bool useMomentum = momentum != 0;
  checkLists(op, {{"self", self}, {"grads", grads}}, self[0]);
  if (useMomentum) checkLists(op, {{"self", self}, {"momentum_buffer_list", momentumBuffers}}, self[0]);
  auto [scale, found] = scaleAndFound(op, self[0], gradScale, foundInf);
  using Arg = MultiTensorArg;
  // Without momentum the buffer argument is the parameter (read, not used) and its result is dropped.
  multiTensorApply("aten::_fused_sgd_", "npu::_npu_fused_sgd_tensor_step",
                   {Arg::chunked(self), Arg::chunked(grads), Arg::chunked(useMomentum ? momentumBuffers : self),
                    Arg::shared(scale), Arg::shared(found), Arg::shared(weightDecay), Arg::shared(momentum),
                    Arg::shared(lr), Arg::shared(dampening), Arg::shared(nesterov), Arg::shared(maximize),
                    Arg::shared(isFirstStep), Arg::shared(useMomentum)},
                   {0, 1, useMomentum ? 2 : -1}, true);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_fused_adam_", &fusedAdamL2);
  m.impl("_fused_adamw_", &fusedAdamW);
  m.impl("_fused_sgd_", &fusedSgd);
}

}  // namespace
}  // namespace torch_npu::native
