// CPU twin of AscendC: the host build of the AscendC kernel API.
//
// Same role as CANN's CPU debug mode: an AscendC kernel source compiles with a host g++ against
// this header (named like AscendC's own entry header so the source needs no edit) and every core
// of a launch runs on a host thread. The twin computes what the hardware computes (fractal
// layouts of the cube path, repeat/stride/mask semantics of the vector unit) and checks what the
// hardware would get wrong or reject - local memory capacity per space, 32-byte aligned
// DataCopy, queue discipline, and the pipe synchronisation a real core needs (twin/sync.h) -
// aborting with the kernel's source location and what is missing.
#pragma once

#include <cstdint>

#define __global__
#define __aicore__
#define __gm__
#define __vector__
#define __cube__
#define __mix__(cube, vector)
#ifndef __NPU_ARCH__
#define __NPU_ARCH__ 2201  // dav-c220: Atlas A2 (910B)
#endif
// AscendC passes kernel pointers as GM_ADDR (a byte pointer into global memory).
#define GM_ADDR uint8_t*

#include "twin/block.h"
#include "twin/sync.h"
#include "twin/tensor.h"
#include "twin/pipe.h"
#include "twin/vector.h"
#include "twin/sort.h"
#include "twin/launch.h"
#include "twin/data_copy.h"
#include "twin/cube.h"
#include "twin/load3d.h"
