// Backward ops with an output_mask (convolution_backward, the norm backwards): the compiled
// record returns every gradient, and those the mask leaves out come back undefined, as the CPU's do.
#pragma once

#include <ATen/core/stack.h>

namespace c10 {
class OperatorHandle;
}

namespace torch_npu {

// Runs the op's compiled record, then hands back the gradients output_mask leaves out undefined.
void compiledKernelMaskingGradients(const c10::OperatorHandle& op, torch::jit::Stack* stack);

}  // namespace torch_npu
