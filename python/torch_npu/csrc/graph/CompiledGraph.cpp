#include "torch_npu/csrc/graph/CompiledGraph.h"

#include <ATen/EmptyTensor.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/DeviceGuard.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/core/NpuAllocator.h"
#include "torch_npu/csrc/core/NpuGenerator.h"
#include "torch_npu/csrc/core/NpuStream.h"

namespace torch_npu::graph {
namespace {

// Intermediates start on the alignment a kernel's copy_in expects of a GM address (DESIGN.md 3).
constexpr int64_t kTempAlign = 512;

at::Tensor emptyNpu(c10::IntArrayRef sizes, c10::ScalarType dtype) {
  return at::detail::empty_generic(sizes, npuAllocator(), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), dtype,
                                   std::nullopt);
}

std::atomic<int64_t> copiedInputs{0};

// Whether `t` is laid out as `strides` say wherever that matters: the stride of a dim of one
// element is never used to address it (a [1, n, h] slice of a batch, a keepdim reduction's result).
bool sameLayout(const at::Tensor& t, c10::IntArrayRef strides) {
  if (t.strides() == strides) return true;
  if (static_cast<size_t>(t.dim()) != strides.size()) return false;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) != 1 && t.stride(d) != strides[d]) return false;
  }
  return true;
}

}  // namespace

int64_t copiedInputCount() { return copiedInputs.load(std::memory_order_relaxed); }

CompiledGraph::CompiledGraph(eager::KernelRecord record, std::vector<int> aliases, size_t inputCount,
                             uint64_t philoxIncrement)
    : record_(std::move(record)), aliases_(std::move(aliases)), inputCount_(inputCount),
      philoxIncrement_(philoxIncrement) {
  TORCH_CHECK(aliases_.size() == record_.outputs.size(), "a compiled graph has ", record_.outputs.size(),
              " outputs but ", aliases_.size(), " alias entries\n", errCode(SubModule::GRAPH, ErrCode::INTERNAL));
  planArena();
}

void CompiledGraph::planArena() {
  // Each intermediate lives from the first launch that names it to the last; launches run in stream
  // order, so intermediates whose lives do not overlap share bytes. Largest first, each at the lowest
  // offset no overlapping-in-time intermediate already holds.
  const size_t count = record_.tempBytes.size();
  std::vector<int64_t> first(count, -1), last(count, -1), bytes(count);
  for (size_t i = 0; i < record_.launches.size(); ++i) {
    for (const eager::LaunchArg& arg : record_.launches[i].args) {
      if (arg.kind == eager::LaunchArg::Kind::Temp) {
        if (first[arg.index] < 0) first[arg.index] = static_cast<int64_t>(i);
        last[arg.index] = static_cast<int64_t>(i);
      }
    }
  }
  std::vector<size_t> order(count);
  for (size_t t = 0; t < count; ++t) {
    order[t] = t;
    bytes[t] = (record_.tempBytes[t] + kTempAlign - 1) / kTempAlign * kTempAlign;
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return bytes[a] > bytes[b]; });
  tempOffsets_.assign(count, 0);
  std::vector<size_t> placed;
  for (size_t t : order) {
    // Candidate offsets: 0 and the end of every placed intermediate alive at the same time.
    std::vector<size_t> alive;
    for (size_t p : placed) {
      if (first[p] <= last[t] && first[t] <= last[p]) alive.push_back(p);
    }
    std::vector<int64_t> candidates{0};
    for (size_t p : alive) candidates.push_back(tempOffsets_[p] + bytes[p]);
    std::sort(candidates.begin(), candidates.end());
    for (int64_t offset : candidates) {
      bool fits = std::none_of(alive.begin(), alive.end(), [&](size_t p) {
        return offset < tempOffsets_[p] + bytes[p] && tempOffsets_[p] < offset + bytes[t];
      });
      if (fits) {
        tempOffsets_[t] = offset;
        break;
      }
    }
    placed.push_back(t);
    arenaBytes_ = std::max(arenaBytes_, tempOffsets_[t] + bytes[t]);
  }
}

std::vector<at::Tensor> CompiledGraph::run(const std::vector<at::Tensor>& inputs,
                                           const std::vector<uint64_t>& givenParams, const ChunkPlan& chunk,
                                           int64_t size) const {
  const bool chunked = chunk.extent > 0;
  TORCH_CHECK(!chunked || (size >= chunk.extent && philoxIncrement_ == 0 && chunk.inputStep.size() == inputCount_ &&
                           chunk.outputDim.size() == record_.outputs.size()),
              "a chunked compiled graph of extent ", chunk.extent, " called with size ", size, "\n",
              errCode(SubModule::GRAPH, ErrCode::INTERNAL));
  TORCH_CHECK(inputs.size() == inputCount_, "the compiled graph takes ", inputCount_, " tensors, got ",
              inputs.size(), "\n", errCode(SubModule::GRAPH, ErrCode::PARAM));
  c10::Device device(c10::DeviceType::PrivateUse1, 0);
  for (const at::Tensor& t : inputs) {
    TORCH_CHECK(t.defined() && t.device().type() == c10::DeviceType::PrivateUse1,
                "every input of a compiled npu graph must be an npu tensor\n",
                errCode(SubModule::GRAPH, ErrCode::PARAM));
    device = t.device();
  }
  c10::DeviceGuard guard(device);
  std::vector<uint64_t> params;
  if (philoxIncrement_ > 0) {
    // As an eager random op does (RandomOps.cpp): under an NPUGraph capture these are placeholders
    // each replay fills in.
    auto* gen = getDefaultNpuGenerator(device.index()).get<NpuGeneratorImpl>();
    std::lock_guard<std::mutex> lock(gen->mutex_);
    auto [seed, offset] = gen->reservePhilox(philoxIncrement_);
    params = {seed, offset};
  }
  params.insert(params.end(), givenParams.begin(), givenParams.end());
  if (chunked) params.resize(std::max<size_t>(params.size(), std::max(chunk.sizeParam, chunk.firstRowParam) + 1));
  std::vector<at::Tensor> outputs;
  std::vector<int64_t> outputStep(record_.outputs.size(), 0);  // bytes per unit of the chunked size
  outputs.reserve(record_.outputs.size());
  for (size_t j = 0; j < record_.outputs.size(); ++j) {
    const eager::OutputSpec& spec = record_.outputs[j];
    if (aliases_[j] >= 0) {
      outputs.push_back(inputs[aliases_[j]]);
    } else if (chunked && chunk.outputDim[j] >= 0) {
      std::vector<int64_t> sizes = spec.sizes;
      const int dim = chunk.outputDim[j];
      int64_t inner = c10::elementSize(spec.dtype);
      for (size_t d = dim + 1; d < sizes.size(); ++d) inner *= sizes[d];
      outputStep[j] = inner * chunk.outputScale[j];
      sizes[dim] = size * chunk.outputScale[j];
      outputs.push_back(emptyNpu(sizes, spec.dtype));
    } else {
      outputs.push_back(emptyNpu(spec.sizes, spec.dtype));
    }
  }
  // One block for every intermediate; freed at return, before the launches run: the caching
  // allocator hands it out again only in stream order.
  at::Tensor arena = arenaBytes_ > 0 ? emptyNpu({arenaBytes_}, at::kByte) : at::Tensor();
  auto* base = arena.defined() ? static_cast<char*>(arena.data_ptr()) : nullptr;
  aclrtStream stream = nativeStream(getCurrentStream(device.index()));
  std::vector<uint64_t> slots;
  // Chunk starts: 0, extent, 2 extent, ..., the last one at size - extent (ChunkPlan).
  const int64_t extent = chunked ? chunk.extent : 1;
  const int64_t end = chunked ? size : 1;
  for (int64_t next = 0; next < end; next += extent) {
    const int64_t start = chunked ? std::min(next, size - extent) : 0;
    if (chunked && chunk.sizeParam >= 0) params.at(chunk.sizeParam) = static_cast<uint64_t>(size);
    if (chunked && chunk.firstRowParam >= 0) params.at(chunk.firstRowParam) = static_cast<uint64_t>(next - start);
    for (const eager::Launch& launch : record_.launches) {
      slots.clear();
      for (const eager::LaunchArg& arg : launch.args) {
        switch (arg.kind) {
          case eager::LaunchArg::Kind::Input:
            slots.push_back(reinterpret_cast<uint64_t>(static_cast<const char*>(inputs[arg.index].const_data_ptr()) +
                                                       (chunked ? start * chunk.inputStep[arg.index] : 0)));
            break;
          case eager::LaunchArg::Kind::Output:
            slots.push_back(reinterpret_cast<uint64_t>(static_cast<char*>(outputs[arg.index].data_ptr()) +
                                                       start * outputStep[arg.index]));
            break;
          case eager::LaunchArg::Kind::Temp:
            slots.push_back(reinterpret_cast<uint64_t>(base + tempOffsets_[arg.index]));
            break;
          case eager::LaunchArg::Kind::Param:
            TORCH_CHECK(static_cast<size_t>(arg.index) < params.size(), "the compiled graph needs scalar parameter ",
                        arg.index, ", got ", params.size(), "\n", errCode(SubModule::GRAPH, ErrCode::PARAM));
            slots.push_back(params[arg.index]);
            break;
        }
      }
      NPU_CHECK_ACL(aclrtLaunchKernel(launch.fn, launch.blockDim, slots.data(), slots.size() * sizeof(uint64_t),
                                      launch.symbol.c_str(), stream));
    }
  }
  return outputs;
}

std::vector<at::Tensor> CompiledGraph::call(const CallPlan& plan, const std::vector<at::Tensor>& args,
                                            std::vector<std::pair<size_t, at::Tensor>>& replay) const {
  auto argument = [&](int k) -> const at::Tensor& {
    TORCH_CHECK(k >= 0 && static_cast<size_t>(k) < args.size() && args[k].defined(), "argument ", k,
                " of a compiled npu graph must be a tensor\n", errCode(SubModule::GRAPH, ErrCode::PARAM));
    return args[k];
  };
  std::vector<at::Tensor> inputs;
  inputs.reserve(plan.inputArgs.size());
  for (size_t k = 0; k < plan.inputArgs.size(); ++k) {
    at::Tensor t = argument(plan.inputArgs[k]);
    if (t.device().is_cpu()) {
      // A 0-d host scalar (Adam's step count), or a host tensor the graph moves to npu (x @ W.to(x.device)):
      // the host-to-device copy eager's _to_copy makes, with its blocking (a pageable source is copied
      // before this returns, so the caller may write it again).
      t = t.to(c10::Device(c10::DeviceType::PrivateUse1, plan.device), /*non_blocking=*/t.dim() == 0);
    }
    // The kernels were built for the traced strides; AOTAutograd hands in what it traced with, mostly.
    if (!sameLayout(t, plan.inputStrides[k])) {
      t = at::empty_strided(t.sizes(), plan.inputStrides[k], t.options()).copy_(t);
      copiedInputs.fetch_add(1, std::memory_order_relaxed);
    }
    inputs.push_back(std::move(t));
  }
  int64_t size = 0;
  if (plan.chunk.extent > 0) size = argument(plan.chunk.sizeArg).size(plan.chunk.sizeDim) / plan.chunk.sizeScale;
  std::vector<at::Tensor> results = run(inputs, {}, plan.chunk, size);
  // A mutated input that had to be copied in: the result went into the copy, so the argument takes it.
  for (size_t j = 0; j < aliases_.size(); ++j) {
    int k = aliases_[j];
    if (k >= 0 && !inputs[k].is_same(args[plan.inputArgs[k]])) args[plan.inputArgs[k]].copy_(inputs[k]);
  }
  for (const auto& [k, j] : plan.copyBack) argument(k).copy_(results[j]);
  std::vector<at::Tensor> outputs(plan.outputs.size());
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    const OutputView& out = plan.outputs[i];
    if (out.base == OutputView::Base::None) continue;
    const at::Tensor& base = out.base == OutputView::Base::Argument ? argument(out.index) : results[out.index];
    if (!out.view) {
      outputs[i] = base;
      continue;
    }
    std::vector<int64_t> baseSizes = out.baseSizes, sizes = out.sizes;
    if (out.baseDynamicDim >= 0) baseSizes[out.baseDynamicDim] = size * out.baseDynamicScale;
    if (out.dynamicDim >= 0) sizes[out.dynamicDim] = size * out.dynamicScale;
    if (base.sizes() != c10::IntArrayRef(baseSizes) || base.strides() != c10::IntArrayRef(out.baseStrides)) {
      replay.emplace_back(i, base);
    } else {
      outputs[i] = base.as_strided(sizes, out.strides, out.absolute ? out.offset : base.storage_offset() + out.offset);
    }
  }
  return outputs;
}

}  // namespace torch_npu::graph
