// AscendC's high-level Matmul entry header ("lib/matmul_intf.h"), named as in CANN so a kernel
// source needs no edit: the twin's matmul::Matmul (twin/matmul.h).
#pragma once

#include "kernel_operator.h"
#include "twin/matmul.h"
