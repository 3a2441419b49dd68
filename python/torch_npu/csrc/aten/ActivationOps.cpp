// npu_swiglu and its backward: checked at the boundary, then one compiled kernel per call
// (the reference they compile from is compiler/npu_mlir/frontend/references/swiglu.py); autograd in C++, so a call
// on the hit path never takes the GIL.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include "torch_npu/csrc/aten/CustomOpChecks.h"
#include "torch_npu/csrc/eager/OpCommand.h"

namespace torch_npu::native {
namespace {

// The dimension `self` is split along, which must hold two equal halves.
int64_t checkedSplitDim(const char* op, const at::Tensor& self, int64_t dim) {
  int64_t d = wrapDim(op, dim, self.dim());
  TORCH_CHECK(self.size(d) % 2 == 0, op, ": self has size ", self.size(d), " along dim ", dim,
              ", which must be even (it is split into two halves)\n", opsErr(ErrCode::PARAM));
  return d;
}

at::Tensor npuSwiglu(const at::Tensor& self, int64_t dim) {
  checkNpuFloating("npu_swiglu", "self", self);
  checkedSplitDim("npu_swiglu", self, dim);
  return eager::OpCommand().Name("npu::npu_swiglu").Input(self).Attr("dim", dim).Run()[0];
}

at::Tensor npuSwigluBackward(const at::Tensor& gradOutput, const at::Tensor& self, int64_t dim) {
  const char* op = "npu_swiglu_backward";
  checkNpuFloating(op, "self", self);
  checkNpuFloating(op, "grad_output", gradOutput);
  checkSameDtype(op, "grad_output", gradOutput, "self", self);
  int64_t d = checkedSplitDim(op, self, dim);
  std::vector<int64_t> half = self.sizes().vec();
  half[d] /= 2;
  checkSameShape(op, "grad_output", gradOutput, "self with dim halved", half);
  return eager::OpCommand().Name("npu::npu_swiglu_backward").Input(gradOutput).Input(self).Attr("dim", dim).Run()[0];
}

class SwigluFunction : public torch::autograd::Function<SwigluFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& self, int64_t dim) {
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("npu::npu_swiglu", "")
                               .typed<at::Tensor(const at::Tensor&, int64_t)>();
    at::AutoDispatchBelowADInplaceOrView guard;
    ctx->save_for_backward({self});
    ctx->saved_data["dim"] = dim;
    return op.call(self, dim);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("npu::npu_swiglu_backward", "")
                               .typed<at::Tensor(const at::Tensor&, const at::Tensor&, int64_t)>();
    at::Tensor self = ctx->get_saved_variables()[0];
    return {op.call(grads[0], self, ctx->saved_data["dim"].toInt()), at::Tensor()};
  }
};

at::Tensor npuSwigluAutograd(const at::Tensor& self, int64_t dim) { return SwigluFunction::apply(self, dim); }

TORCH_LIBRARY_IMPL(npu, PrivateUse1, m) {
  m.impl("npu_swiglu", &npuSwiglu);
  m.impl("npu_swiglu_backward", &npuSwigluBackward);
}

// Every backend's autograd (the CPU reference kernels too), as torch_npu registers its fused ops.
TORCH_LIBRARY_IMPL(npu, Autograd, m) { m.impl("npu_swiglu", &npuSwigluAutograd); }

}  // namespace
}  // namespace torch_npu::native
