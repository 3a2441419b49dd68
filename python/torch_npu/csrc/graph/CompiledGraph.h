// A torch.compile graph compiled whole by npu_mlir: its launch list over a static buffer plan,
// replayed by C++ on the current stream (no Python per kernel, no copies of the inputs).
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "torch_npu/csrc/eager/KernelCache.h"

namespace torch_npu::graph {

class CompiledGraph {
 public:
  // `aliases[j]` >= 0: output j is written straight into input aliases[j] (an input the graph
  // mutates: optimizer state, running statistics), else it is a fresh tensor of the plan's size.
  // `philoxIncrement` > 0: the graph draws random numbers, from scalar parameters 0 and 1 (seed and
  // offset), and each run reserves that many Philox counters of the device's default generator.
  CompiledGraph(eager::KernelRecord record, std::vector<int> aliases, size_t inputCount, uint64_t philoxIncrement);

  // Queues every kernel on the current stream of the inputs' device and returns the outputs;
  // `params` are the scalar parameters' bits by value (after the seed and offset of a random graph).
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs, const std::vector<uint64_t>& params) const;

  size_t launchCount() const { return record_.launches.size(); }
  int64_t arenaBytes() const { return arenaBytes_; }

 private:
  void planArena();

  eager::KernelRecord record_;
  std::vector<int> aliases_;
  size_t inputCount_;
  uint64_t philoxIncrement_;
  std::vector<int64_t> tempOffsets_;  // each intermediate's place in the one arena of a call (planArena)
  int64_t arenaBytes_ = 0;
};

}  // namespace torch_npu::graph
