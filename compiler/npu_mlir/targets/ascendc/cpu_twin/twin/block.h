// Block context, dtypes and failure reporting of the CPU twin.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

using half = _Float16;

// bf16 has no host arithmetic type in g++ 12: store the upper half of an fp32.
struct bfloat16_t {
  uint16_t bits;
  bfloat16_t() = default;
  bfloat16_t(float f) {  // round to nearest even, as Cast(..., CAST_RINT) does
    uint32_t u;
    std::memcpy(&u, &f, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    bits = static_cast<uint16_t>(u >> 16);
  }
  operator float() const {
    uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
};

namespace AscendC {

[[noreturn]] inline void TwinFail(const char* what) {
  std::fprintf(stderr, "ascendc cpu twin: %s\n", what);
  std::abort();
}

namespace twin {
enum class CoreType { AIV, AIC };
struct BlockContext {
  int64_t idx = 0;      // GetBlockIdx: AIC index, or AIV index (2 per AIC in a 1:2 mix launch)
  int64_t num = 1;      // GetBlockNum: blocks of the launch
  int64_t sub = 0;      // GetSubBlockIdx
  int64_t ratio = 1;    // GetTaskRatio
  CoreType core = CoreType::AIV;
  bool mix = false;     // launched as 1 AIC : 2 AIV groups
  int64_t group = 0;    // the AIC + AIV group of a mix launch
};
inline thread_local BlockContext block;
}  // namespace twin

}  // namespace AscendC
