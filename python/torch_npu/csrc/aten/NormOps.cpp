// Normalization ops on NPU tensors.
// - npu_rms_norm and its backward: checked at the boundary, then one compiled kernel per call (the
//   reference they compile from is compiler/npu_mlir/frontend/references/rms_norm.py); autograd in C++,
//   so a call on the hit path never takes the GIL.
// - native_layer_norm_backward, native_group_norm_backward, native_batch_norm_backward: the eager
//   dispatcher's compiled kernel, with the gradients output_mask leaves out returned undefined.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <array>
#include <tuple>

#include "torch_npu/csrc/aten/CustomOpChecks.h"
#include "torch_npu/csrc/aten/MaskedGradients.h"
#include "torch_npu/csrc/eager/EagerDispatch.h"
#include "torch_npu/csrc/eager/OpCommand.h"

namespace torch_npu::native {
namespace {

// gamma covers the trailing dims of self, which is normalized over them.
void checkGamma(const char* op, const at::Tensor& self, const at::Tensor& gamma) {
  checkNpuFloating(op, "self", self);
  checkNpuFloating(op, "gamma", gamma);
  checkSameDtype(op, "gamma", gamma, "self", self);
  int64_t leading = self.dim() - gamma.dim();
  TORCH_CHECK(gamma.dim() >= 1 && leading >= 0 && gamma.sizes() == self.sizes().slice(leading), op,
              ": gamma has shape ", gamma.sizes(), ", expected the last dims of self ",
              self.sizes().slice(std::max<int64_t>(self.dim() - std::max<int64_t>(gamma.dim(), 1), 0)),
              " (self has shape ", self.sizes(), ")\n", opsErr(ErrCode::PARAM));
}

// rstd keeps self's leading dims and is 1 in the normalized ones, as torch_npu returns it.
std::vector<int64_t> rstdShape(const at::Tensor& self, const at::Tensor& gamma) {
  std::vector<int64_t> shape = self.sizes().vec();
  std::fill(shape.end() - gamma.dim(), shape.end(), 1);
  return shape;
}

std::tuple<at::Tensor, at::Tensor> npuRmsNorm(const at::Tensor& self, const at::Tensor& gamma, double epsilon) {
  checkGamma("npu_rms_norm", self, gamma);
  TORCH_CHECK(epsilon >= 0, "npu_rms_norm: epsilon is ", epsilon, "; expected a value >= 0 (default 1e-6)\n",
              opsErr(ErrCode::VALUE));
  std::vector<at::Tensor> out =
      eager::OpCommand().Name("npu::npu_rms_norm").Input(self).Input(gamma).Attr("epsilon", epsilon).Run();
  return {out[0], out[1]};
}

std::tuple<at::Tensor, at::Tensor> npuRmsNormBackward(const at::Tensor& dy, const at::Tensor& self,
                                                      const at::Tensor& gamma, const at::Tensor& rstd) {
  const char* op = "npu_rms_norm_backward";
  checkGamma(op, self, gamma);
  checkNpuFloating(op, "dy", dy);
  checkSameDtype(op, "dy", dy, "self", self);
  checkSameShape(op, "dy", dy, "the shape of self", self.sizes());
  checkNpuFloating(op, "rstd", rstd);
  TORCH_CHECK(rstd.scalar_type() == at::kFloat, op, ": rstd has dtype ", rstd.scalar_type(),
              "; expected float32, as npu_rms_norm returns it\n", opsErr(ErrCode::TYPE));
  checkSameShape(op, "rstd", rstd, "self's leading dims, 1 in gamma's", rstdShape(self, gamma));
  std::vector<at::Tensor> out =
      eager::OpCommand().Name("npu::npu_rms_norm_backward").Input(dy).Input(self).Input(gamma).Input(rstd).Run();
  return {out[0], out[1]};
}

class RmsNormFunction : public torch::autograd::Function<RmsNormFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const at::Tensor& self,
                                                const at::Tensor& gamma, double epsilon) {
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("npu::npu_rms_norm", "")
                               .typed<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, double)>();
    at::AutoDispatchBelowADInplaceOrView guard;
    auto [y, rstd] = op.call(self, gamma, epsilon);
    ctx->save_for_backward({self, gamma, rstd});
    ctx->mark_non_differentiable({rstd});
    return {y, rstd};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    static const auto op =
        c10::Dispatcher::singleton()
            .findSchemaOrThrow("npu::npu_rms_norm_backward", "")
            .typed<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                                      const at::Tensor&)>();
    torch::autograd::variable_list saved = ctx->get_saved_variables();
    auto [dx, dgamma] = op.call(grads[0], saved[0], saved[1], saved[2]);
    // torch_npu's RmsNormGrad accumulates dgamma in float32; the parameter's gradient has its dtype.
    return {dx, dgamma.to(saved[1].scalar_type()), at::Tensor()};
  }
};

std::tuple<at::Tensor, at::Tensor> npuRmsNormAutograd(const at::Tensor& self, const at::Tensor& gamma,
                                                      double epsilon) {
  torch::autograd::variable_list out = RmsNormFunction::apply(self, gamma, epsilon);
  return {out[0], out[1]};
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  for (const char* name : {"native_layer_norm_backward", "native_group_norm_backward", "native_batch_norm_backward"}) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&compiledKernelMaskingGradients>());
  }
}

TORCH_LIBRARY_IMPL(npu, PrivateUse1, m) {
  m.impl("npu_rms_norm", &npuRmsNorm);
  m.impl("npu_rms_norm_backward", &npuRmsNormBackward);
}

// Every backend's autograd (the CPU reference kernels too), as torch_npu registers its fused ops.
TORCH_LIBRARY_IMPL(npu, Autograd, m) { m.impl("npu_rms_norm", &npuRmsNormAutograd); }

}  // namespace
}  // namespace torch_npu::native

namespace torch_npu {

// A kernel cannot return an undefined tensor, so the compiled record returns all three gradients
// (those output_mask leaves out are zeros, never computed: frontend/decompositions/normalization.py,
// batch_norm.py, conv_gemm.py). The CPU returns None for them, and callers test for it (autograd,
// functorch, a user asking for the input gradient alone), so they come back undefined here too.
void compiledKernelMaskingGradients(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  constexpr size_t kNumReturns = 3;
  c10::List<bool> maskList = stack->back().toBoolList();  // output_mask is the last argument of each
  std::array<bool, kNumReturns> mask{};
  for (size_t j = 0; j < kNumReturns; ++j) mask[j] = maskList.get(j);
  eager::compiledKernel(op, stack);
  const size_t base = stack->size() - kNumReturns;
  for (size_t j = 0; j < kNumReturns; ++j) {
    if (!mask[j]) (*stack)[base + j] = c10::IValue(at::Tensor());
  }
}

}  // namespace torch_npu
