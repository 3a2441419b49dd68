// The AI-core pool: one process-wide set of threads, sized to the host's cores,
// that runs the blocks of every kernel launch from every stream.
#pragma once

#include <cstdint>
#include <functional>

namespace npurt {

struct BlockFailure {
  int32_t code = 0;  // 0: every block succeeded
  uint32_t blockIdx = 0;
};

// Runs block(0..blockDim-1) over the pool (the caller takes blocks too) and
// returns once all have finished, with the first failure seen.
BlockFailure runBlocks(uint32_t blockDim, const std::function<int32_t(uint32_t)>& block);

}  // namespace npurt
