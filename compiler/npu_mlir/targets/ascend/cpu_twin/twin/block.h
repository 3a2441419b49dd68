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
struct BlockContext {
  int64_t idx = 0;
  int64_t num = 1;
};
inline thread_local BlockContext block;
}  // namespace twin

inline int64_t GetBlockIdx() { return twin::block.idx; }
inline int64_t GetBlockNum() { return twin::block.num; }

// Runs every block of a launch, one host thread per block, as the AI-core pool
// does: blocks share global memory and nothing else.
inline void RunBlocks(uint32_t blockDim, const std::function<void()>& body) {
  std::vector<std::thread> cores;
  for (uint32_t i = 0; i < blockDim; ++i) {
    cores.emplace_back([i, blockDim, &body] {
      twin::block = {static_cast<int64_t>(i), static_cast<int64_t>(blockDim)};
      body();
    });
  }
  for (auto& t : cores) t.join();
}

// Runs one block on the calling thread: the entry the runtime's aclrtKernelFunc uses.
inline void RunBlock(uint32_t blockIdx, uint32_t blockDim, const std::function<void()>& body) {
  twin::block = {static_cast<int64_t>(blockIdx), static_cast<int64_t>(blockDim)};
  body();
}

}  // namespace AscendC

// CANN's CPU debug launcher: ICPU_RUN_KF(kernel, blockDim, args...).
#define ICPU_RUN_KF(kernel, blockDim, ...) \
  ::AscendC::RunBlocks((blockDim), [&] { kernel(__VA_ARGS__); })
