// CPU twin of the AscendC subset that `npu-translate --emit-ascendc` prints.
//
// Same role as CANN's CPU debug mode: the emitted kernel source compiles with a
// host g++ against this header (named like AscendC's own entry header so the
// source needs no edit) and each block runs on a host thread. The twin checks
// what the hardware would reject - local memory capacity per space, 32-byte
// aligned DataCopy, queue discipline (AllocTensor/EnQue/DeQue/FreeTensor) -
// and aborts with a message naming the violation, so a kernel that runs here
// obeys the constraints the tiling and memory-planning passes promise.
#pragma once

#include <cstdint>

#define __global__
#define __aicore__
#define __gm__
// AscendC passes kernel pointers as GM_ADDR (a byte pointer into global memory).
#define GM_ADDR uint8_t*

#include "twin/block.h"
#include "twin/tensor.h"
#include "twin/pipe.h"
#include "twin/data_copy.h"
#include "twin/vector.h"
#include "twin/cube.h"
