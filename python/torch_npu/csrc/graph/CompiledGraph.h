// A torch.compile graph compiled whole by npu_mlir: its launch list over a static buffer plan,
// replayed by C++ on the current stream (no Python per kernel, no copies of the inputs).
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "torch_npu/csrc/eager/KernelCache.h"

namespace torch_npu::graph {

// How a call hands back one output of the piece (torch_npu.dynamo.executable): nothing, an argument
// or a result of the plan, itself or a view of it with the layout the view chain gave when traced.
struct OutputView {
  enum class Base { None, Argument, Result };
  Base base = Base::None;
  int index = 0;  // argument index (Argument) or result index (Result)
  bool view = false;
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0;     // storage offset, added to the base's unless `absolute` (the chain has an as_strided)
  bool absolute = false;
  std::vector<int64_t> baseSizes, baseStrides;  // the base's layout the view was traced on ({-1}: never the base's)
  // A chunked graph (ChunkPlan): the dim of the view / of its base whose size is the call's dynamic
  // size times the scale (-1: none); the traced sizes hold the chunk's there.
  int dynamicDim = -1, baseDynamicDim = -1;
  int64_t dynamicScale = 0, baseDynamicScale = 0;
};

// A graph whose kernels were built for a chunk of `extent` along one dynamic size (Dynamo's
// symbolic shapes, torch_npu.dynamo.dynamic): every input and result holding that size holds it in
// its outermost dim of more than one element, and the graph acts on each row of it independently.
// A call runs the launch list once per chunk, the input and result addresses of each launch
// advanced to the chunk; the last chunk ends at the size (it may overlap the one before it, which
// then writes the same values twice). Intermediates keep the chunk's arena.
struct ChunkPlan {
  int64_t extent = 0;                // 0: not chunked
  int sizeArg = 0, sizeDim = 0;      // the call's size: args[sizeArg].size(sizeDim) / sizeScale
  int64_t sizeScale = 1;
  std::vector<int64_t> inputStep;    // per graph input: bytes one unit of the size advances (0: no dynamic dim)
  std::vector<int> outputDim;        // per plan result: its dynamic dim (-1: none)
  std::vector<int64_t> outputScale;  // ... whose size is the call's size times this
  // The scalar parameters a chunk reads (-1: none): the call's size (a mean divides by it), and the
  // first row of the chunk that no chunk before it computed (the last chunk overlaps the one before
  // it; a sum over the size masks the rows before this one out).
  int sizeParam = -1, firstRowParam = -1;
};

// What a call does around the plan: which arguments are the graph's inputs and the strides its
// kernels were built for, how each output is made, which mutations are copied back.
struct CallPlan {
  std::vector<int> inputArgs;
  std::vector<std::vector<int64_t>> inputStrides;
  std::vector<OutputView> outputs;
  std::vector<std::pair<int, int>> copyBack;  // (argument, result): mutations that could not alias
  c10::DeviceIndex device = 0;                // where a CPU input (Adam's step count, a host tensor moved to npu) is uploaded
  ChunkPlan chunk;
};

// Inputs CompiledGraph::call copied because their strides were not the traced ones, since the process started.
int64_t copiedInputCount();

class CompiledGraph {
 public:
  // `aliases[j]` >= 0: output j is written straight into input aliases[j] (an input the graph
  // mutates: optimizer state, running statistics), else it is a fresh tensor of the plan's size.
  // `philoxIncrement` > 0: the graph draws random numbers, from scalar parameters 0 and 1 (seed and
  // offset), and each run reserves that many Philox counters of the device's default generator.
  CompiledGraph(eager::KernelRecord record, std::vector<int> aliases, size_t inputCount, uint64_t philoxIncrement);

  // Queues every kernel on the current stream of the inputs' device and returns the outputs;
  // `params` are the scalar parameters' bits by value (after the seed and offset of a random graph).
  // With `chunk.extent` > 0 the plan runs once per chunk of `size` (ChunkPlan).
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs, const std::vector<uint64_t>& params,
                              const ChunkPlan& chunk = {}, int64_t size = 0) const;

  // One call of the piece on AOTAutograd's arguments (undefined where an argument is not a tensor):
  // inputs taken from `args` (a CPU tensor uploaded, other strides than traced copied; the
  // stride of a dim of one element is never read), the plan
  // run, outputs made by `plan`. An output whose view chain does not give the traced layout (a view
  // of an argument laid out otherwise than traced, a chain that copies) is left undefined and
  // appended to `replay` with its base: the caller replays its view chain.
  std::vector<at::Tensor> call(const CallPlan& plan, const std::vector<at::Tensor>& args,
                               std::vector<std::pair<size_t, at::Tensor>>& replay) const;

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
