// ERR01001 on op argument errors: torch_npu marks an op's refusal of its arguments
// ("ERR01001 OPS invalid parameter"), whichever check raised it.
#pragma once

#include <c10/util/Exception.h>

namespace torch_npu {

// Adds ERR01001 to `e` unless its message already carries an ERR code.
void markArgumentError(c10::Error& e);

}  // namespace torch_npu
