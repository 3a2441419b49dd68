// ERR01001 on op argument errors: torch_npu marks an op's refusal of its arguments
// ("ERR01001 OPS invalid parameter"), whichever check raised it.
#pragma once

#include <ATen/core/stack.h>
#include <c10/util/Exception.h>

namespace c10 {
class OperatorHandle;
}

namespace torch_npu {

// Adds ERR01001 to `e` unless its message already carries an ERR code.
void markArgumentError(c10::Error& e);

// The eager dispatcher's view kernel (transpose, select, expand, ...), its errors marked.
void viewWithArgumentErrors(const c10::OperatorHandle& op, torch::jit::Stack* stack);

}  // namespace torch_npu
