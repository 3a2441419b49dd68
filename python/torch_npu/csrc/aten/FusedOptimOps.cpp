// torch.optim's fused=True path on the NPU: aten::_fused_adam_, _fused_adamw_ and _fused_sgd_, one
// multi-tensor launch per dtype group (MultiTensorApply.h) of the per-tensor step compiled from its
// reference (compiler/npu_mlir/frontend/references/fused_optim.py), which reads the step count,
// grad_scale and found_inf on the device - so GradScaler + fused=True steps without a host sync, as
// on CUDA. Each chunk is one vector kernel over every state (plus two one-element kernels for Adam's
// bias corrections); its results are written straight into the caller's tensors.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/zeros.h>
#include <torch/library.h>

#include <algorithm>

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

// The step's scaling arguments: grad_scale and found_inf, and the chunk of zeros the per-chunk step
// compares found_inf with (a vector compare in the step's kernel); `scaled` is false when neither is
// given, and the step then neither reads them (placeholders stand in) nor writes the gradient.
struct Scaling {
  bool scaled = false;
  MultiTensorArg scale, found, zeros;
};

Scaling scaling(const char* op, at::TensorList self, const at::Tensor& placeholder,
                const std::optional<at::Tensor>& gradScale, const std::optional<at::Tensor>& foundInf) {
  const at::Tensor& first = self[0];
  for (const auto& [name, t] : {std::pair<const char*, const std::optional<at::Tensor>&>{"grad_scale", gradScale},
                                {"found_inf", foundInf}}) {
    if (!t.has_value() || !t->defined()) continue;
    TORCH_CHECK(t->device() == first.device() && t->numel() == 1, op, ": ", name, " must be a 1-element tensor on ",
                first.device(), ", got ", t->numel(), " elements on ", t->device(), "\n", opsErr(ErrCode::PARAM));
  }
  const bool hasScale = gradScale.has_value() && gradScale->defined();
  const bool hasFound = foundInf.has_value() && foundInf->defined();
  if (!hasScale && !hasFound) {
    return {false, MultiTensorArg::shared(placeholder), MultiTensorArg::shared(placeholder), MultiTensorArg::chunked(self)};
  }
  auto options = first.options().dtype(at::kFloat);
  int64_t longest = 0;
  for (const at::Tensor& t : self) longest = std::max(longest, t.numel());
  return {true, MultiTensorArg::shared(hasScale ? *gradScale : at::ones({1}, options)),
          MultiTensorArg::shared(hasFound ? *foundInf : at::zeros({1}, options)),
          MultiTensorArg::sharedChunk(at::zeros({std::max<int64_t>(1, std::min(longest, kChunkElements))}, options))};
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
  Scaling s = scaling(op, self, stateSteps[0], gradScale, foundInf);
  using Arg = MultiTensorArg;
  // Result k of the per-chunk step is written into argument writes[k]; the unscaled gradient (unless
  // scaled) and max_exp_avg_sq (unless amsgrad) come back empty: dropped, never written.
  multiTensorApply(std::string("aten::") + op, "npu::_npu_fused_adam_tensor_step",
                   {Arg::chunked(self), Arg::chunked(grads), Arg::chunked(expAvgs), Arg::chunked(expAvgSqs),
                    Arg::chunked(amsgrad ? maxExpAvgSqs : expAvgSqs), Arg::perTensor(stateSteps), s.scale, s.found,
                    s.zeros, Arg::shared(lr), Arg::shared(beta1), Arg::shared(beta2), Arg::shared(weightDecay),
                    Arg::shared(eps), Arg::shared(amsgrad), Arg::shared(maximize), Arg::shared(decoupled),
                    Arg::shared(s.scaled)},
                   {0, s.scaled ? 1 : -1, 2, 3, amsgrad ? 4 : -1}, true);
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
  // Without a scale, an element of self stands in for the scaling tensors (not read).
  at::Tensor placeholder = self[0].flatten()[0];
  Scaling s = scaling(op, self, placeholder, gradScale, foundInf);
  using Arg = MultiTensorArg;
  // Without momentum the buffer argument is the parameter (read, not used) and its result is dropped.
  multiTensorApply("aten::_fused_sgd_", "npu::_npu_fused_sgd_tensor_step",
                   {Arg::chunked(self), Arg::chunked(grads), Arg::chunked(useMomentum ? momentumBuffers : self),
                    s.scale, s.found, s.zeros, Arg::shared(weightDecay), Arg::shared(momentum), Arg::shared(lr),
                    Arg::shared(dampening), Arg::shared(nesterov), Arg::shared(maximize), Arg::shared(isFirstStep),
                    Arg::shared(useMomentum), Arg::shared(s.scaled)},
                   {0, s.scaled ? 1 : -1, useMomentum ? 2 : -1}, true);
}

// npu::_npu_fused_step_(op, tensors, values, writes): torch_npu.optim's other fused steps over their
// combined buffers, in place. The reference op `op` ("npu::_npu_fused_adadelta") runs as one
// multi-tensor launch: its tensor arguments are `tensors` in schema order (a 0-d tensor, such as a
// clip coefficient, is shared; a buffer is chunked), its other arguments `values` in order; result k
// is written into tensors[writes[k]], or (-1) returned - empty if the reference drops it.
std::vector<at::Tensor> fusedStepInPlace(c10::string_view op, at::TensorList tensors, c10::ArrayRef<c10::Scalar> values,
                                         at::IntArrayRef writes) {
  const std::string qualified(op);
  const std::string prefix = "npu::_npu_fused_";
  TORCH_CHECK(qualified.rfind(prefix, 0) == 0, "_npu_fused_step_: ", qualified, " is not a fused optimizer step (",
              prefix, "*)\n", opsErr(ErrCode::PARAM));
  auto handle = c10::Dispatcher::singleton().findSchema({qualified, ""});
  TORCH_CHECK(handle.has_value(), "_npu_fused_step_: no operator ", qualified, "\n", opsErr(ErrCode::NOT_FOUND));
  const c10::FunctionSchema& schema = handle->schema();
  TORCH_CHECK(!tensors.empty(), "_npu_fused_step_: ", qualified, " needs its buffers\n", opsErr(ErrCode::PARAM));
  checkNpuFloating(qualified.c_str(), "the first buffer", tensors[0]);
  std::vector<MultiTensorArg> args;
  std::vector<int> argOf;  // tensors[j] -> its argument index
  size_t t = 0, v = 0;
  for (const c10::Argument& a : schema.arguments()) {
    const c10::TypeKind kind = a.real_type()->kind();
    if (kind == c10::TypeKind::TensorType) {
      TORCH_CHECK(t < tensors.size(), "_npu_fused_step_: ", qualified, " takes more tensors than the ", tensors.size(),
                  " given\n", opsErr(ErrCode::PARAM));
      const at::Tensor& x = tensors[t++];
      TORCH_CHECK(x.device() == tensors[0].device(), "_npu_fused_step_: ", a.name(), " is on ", x.device(),
                  ", the buffers on ", tensors[0].device(), "\n", opsErr(ErrCode::PARAM));
      argOf.push_back(static_cast<int>(args.size()));
      args.push_back(x.dim() == 0 ? MultiTensorArg::shared(x) : MultiTensorArg::chunked({x}));
      continue;
    }
    TORCH_CHECK(v < values.size(), "_npu_fused_step_: ", qualified, " takes more values than the ", values.size(),
                " given\n", opsErr(ErrCode::PARAM));
    const c10::Scalar& value = values[v++];
    c10::IValue iv = kind == c10::TypeKind::BoolType ? c10::IValue(value.toBool())
                     : kind == c10::TypeKind::IntType ? c10::IValue(value.toLong())
                                                      : c10::IValue(value.toDouble());
    args.push_back(MultiTensorArg::shared(std::move(iv)));
  }
  TORCH_CHECK(t == tensors.size() && v == values.size() && writes.size() == schema.returns().size(),
              "_npu_fused_step_: ", qualified, " takes ", t, " tensors, ", v, " values and ", schema.returns().size(),
              " writes; got ", tensors.size(), ", ", values.size(), " and ", writes.size(), "\n", opsErr(ErrCode::PARAM));
  std::vector<int> into;
  for (int64_t w : writes) {
    TORCH_CHECK(w >= -1 && w < static_cast<int64_t>(argOf.size()) && (w < 0 || args[argOf[w]].kind == MultiTensorArg::Kind::Chunked),
                "_npu_fused_step_: write target ", w, " is not one of the buffers\n", opsErr(ErrCode::PARAM));
    into.push_back(w < 0 ? -1 : argOf[w]);
  }
  std::vector<std::vector<at::Tensor>> results = multiTensorApply(qualified, qualified, args, into, true);
  std::vector<at::Tensor> fresh;
  for (size_t k = 0; k < into.size(); ++k) {
    if (into[k] < 0) fresh.push_back(results[0][k]);
  }
  return fresh;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_fused_adam_", &fusedAdamL2);
  m.impl("_fused_adamw_", &fusedAdamW);
  m.impl("_fused_sgd_", &fusedSgd);
}

TORCH_LIBRARY_FRAGMENT(npu, m) {
  m.def("_npu_fused_step_(str op, Tensor(a!)[] tensors, Scalar[] values, int[] writes) -> Tensor[]");
}

TORCH_LIBRARY_IMPL(npu, PrivateUse1, m) { m.impl("_npu_fused_step_", &fusedStepInPlace); }

}  // namespace
}  // namespace torch_npu::native
