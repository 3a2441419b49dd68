// Convolution on NPU tensors. ATen routes convolutions of devices it does not know to
// convolution_overrideable / convolution_backward_overrideable. Both redispatch to the generic
// aten::convolution / aten::convolution_backward on the same tensors, which the eager dispatcher
// compiles (npu_mlir/frontend/decompositions/conv_gemm.py traces them as GEMMs): convolution is
// listed in npu_native_functions.yaml, convolution_backward is registered here.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>


#include "torch_npu/csrc/aten/MaskedGradients.h"
#include "torch_npu/csrc/eager/EagerDispatch.h"

namespace torch_npu {
namespace {

// By value: findSchemaOrThrow returns a temporary handle.
c10::OperatorHandle findOp(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "");
}

void convolutionOverrideable(const c10::OperatorHandle& /*op*/, torch::jit::Stack* stack) {
  static const c10::OperatorHandle convolution = findOp("aten::convolution");
  convolution.callBoxed(stack);
}

// Stack: grad_output, input, weight, stride, padding, dilation, transposed,
// output_padding, groups, output_mask. convolution_backward takes bias_sizes after weight.
void convolutionBackwardOverrideable(const c10::OperatorHandle& /*op*/, torch::jit::Stack* stack) {
  static const c10::OperatorHandle backward = findOp("aten::convolution_backward");
  constexpr size_t kNumArgs = 10;
  const size_t base = stack->size() - kNumArgs;
  const at::Tensor& weight = (*stack)[base + 2].toTensor();
  bool transposed = (*stack)[base + 6].toBool();
  int64_t groups = (*stack)[base + 8].toInt();
  int64_t outChannels = transposed ? weight.size(1) * groups : weight.size(0);
  stack->insert(stack->begin() + static_cast<std::ptrdiff_t>(base + 3), c10::IValue(std::vector<int64_t>{outChannels}));
  backward.callBoxed(stack);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("convolution_backward", torch::CppFunction::makeFromBoxedFunction<&compiledKernelMaskingGradients>());
  m.impl("convolution_overrideable", torch::CppFunction::makeFromBoxedFunction<&convolutionOverrideable>());
  m.impl("convolution_backward_overrideable",
         torch::CppFunction::makeFromBoxedFunction<&convolutionBackwardOverrideable>());
}

}  // namespace
}  // namespace torch_npu
