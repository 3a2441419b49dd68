// npu_rotary_mul and its backward: checked at the boundary, then one compiled kernel per call
// (the reference they compile from is compiler/npu_mlir/frontend/references/rotary_mul.py); autograd in C++, so a
// call on the hit path never takes the GIL.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/library.h>

#include <tuple>

#include "torch_npu/csrc/aten/CustomOpChecks.h"
#include "torch_npu/csrc/eager/OpCommand.h"

namespace torch_npu::native {
namespace {

void checkRotaryArgs(const char* op, const at::Tensor& self, const at::Tensor& r1, const at::Tensor& r2,
                     c10::string_view mode) {
  checkNpuFloating(op, "self", self);
  TORCH_CHECK(mode == "half" || mode == "interleave", op, ": rotary_mode is '", mode,
              "'; expected 'half' or 'interleave'\n", opsErr(ErrCode::VALUE));
  TORCH_CHECK(self.dim() >= 1 && self.size(-1) % 2 == 0, op, ": self has shape ", self.sizes(),
              "; its last dim must be even (it holds rotated pairs)\n", opsErr(ErrCode::PARAM));
  for (auto [name, r] : {std::pair<const char*, const at::Tensor&>{"r1", r1}, {"r2", r2}}) {
    checkNpuFloating(op, name, r);
    checkSameDtype(op, name, r, "self", self);
    // r broadcasts to self without growing it: trailing dims equal to self's or 1.
    bool broadcasts = r.dim() <= self.dim();
    for (int64_t i = 1; broadcasts && i <= r.dim(); ++i) {
      broadcasts = r.size(-i) == self.size(-i) || r.size(-i) == 1;
    }
    TORCH_CHECK(broadcasts, op, ": ", name, " has shape ", r.sizes(), ", which does not broadcast to self's shape ",
                self.sizes(), "; each of its dims must equal self's or be 1\n", opsErr(ErrCode::PARAM));
  }
}

at::Tensor npuRotaryMul(const at::Tensor& self, const at::Tensor& r1, const at::Tensor& r2,
                        c10::string_view rotaryMode) {
  checkRotaryArgs("npu_rotary_mul", self, r1, r2, rotaryMode);
  return eager::OpCommand()
      .Name("npu::npu_rotary_mul")
      .Input(self)
      .Input(r1)
      .Input(r2)
      .Attr("rotary_mode", std::string(rotaryMode))
      .Run()[0];
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> npuRotaryMulBackward(const at::Tensor& grad, const at::Tensor& self,
                                                                    const at::Tensor& r1, const at::Tensor& r2,
                                                                    c10::string_view rotaryMode) {
  const char* op = "npu_rotary_mul_backward";
  checkRotaryArgs(op, self, r1, r2, rotaryMode);
  checkNpuFloating(op, "grad", grad);
  checkSameDtype(op, "grad", grad, "self", self);
  checkSameShape(op, "grad", grad, "the shape of self", self.sizes());
  std::vector<at::Tensor> out = eager::OpCommand()
                                    .Name("npu::npu_rotary_mul_backward")
                                    .Input(grad)
                                    .Input(self)
                                    .Input(r1)
                                    .Input(r2)
                                    .Attr("rotary_mode", std::string(rotaryMode))
                                    .Run();
  return {out[0], out[1], out[2]};
}

class RotaryMulFunction : public torch::autograd::Function<RotaryMulFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& self, const at::Tensor& r1,
                            const at::Tensor& r2, const std::string& rotaryMode) {
    static const auto op =
        c10::Dispatcher::singleton()
            .findSchemaOrThrow("npu::npu_rotary_mul", "")
            .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, c10::string_view)>();
    at::AutoDispatchBelowADInplaceOrView guard;
    ctx->save_for_backward({self, r1, r2});
    ctx->saved_data["rotary_mode"] = rotaryMode;
    return op.call(self, r1, r2, rotaryMode);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("npu::npu_rotary_mul_backward", "")
                               .typed<std::tuple<at::Tensor, at::Tensor, at::Tensor>(
                                   const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                   c10::string_view)>();
    torch::autograd::variable_list saved = ctx->get_saved_variables();
    auto [dx, dr1, dr2] = op.call(grads[0], saved[0], saved[1], saved[2], ctx->saved_data["rotary_mode"].toStringRef());
    return {dx, dr1, dr2, at::Tensor()};
  }
};

at::Tensor npuRotaryMulAutograd(const at::Tensor& self, const at::Tensor& r1, const at::Tensor& r2,
                                c10::string_view rotaryMode) {
  return RotaryMulFunction::apply(self, r1, r2, std::string(rotaryMode));
}

TORCH_LIBRARY_IMPL(npu, PrivateUse1, m) {
  m.impl("npu_rotary_mul", &npuRotaryMul);
  m.impl("npu_rotary_mul_backward", &npuRotaryMulBackward);
}

// Every backend's autograd (the CPU reference kernels too), as torch_npu registers its fused ops.
TORCH_LIBRARY_IMPL(npu, Autograd, m) { m.impl("npu_rotary_mul", &npuRotaryMulAutograd); }

}  // namespace
}  // namespace torch_npu::native
