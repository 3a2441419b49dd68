#include "torch_npu/csrc/aten/MultiTensorApply.h"

#include <ATen/EmptyTensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/as_strided.h>
#include <ATen/ops/full.h>
#include <c10/core/DeviceGuard.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/core/NpuAllocator.h"
#include "torch_npu/csrc/core/NpuDevice.h"
#include "torch_npu/csrc/core/NpuFormat.h"
#include "torch_npu/csrc/core/NpuStream.h"
#include "torch_npu/csrc/eager/EagerDispatch.h"
#include "torch_npu/csrc/eager/KernelCache.h"
#include "torch_npu/csrc/npu/OverflowCheck.h"
#include "npurt/acl_mdl.h"

namespace torch_npu::native {
namespace {

using Kind = MultiTensorArg::Kind;
using eager::CacheEntry;
using eager::KernelRecord;
using eager::LaunchArg;

// The 910B's vector cores: a table never needs more blocks than a vector kernel would get.
constexpr uint64_t kMaxTableBlocks = 48;
constexpr uint64_t kWordsPerStep = 3;  // function, (block index << 32 | block count), slot offset

// The table kernel. Its argument is 64-bit words: the work-item count; per item the word offset of
// its first step and its step count; the steps (a chunk kernel's function, its block index and block count, the word
// offset of its ABI slots); then the slots. Block b of B runs items [count*b/B, count*(b+1)/B), each
// item's steps in order: one block of a single-launch chunk kernel is an item, while a chunk whose
// record is several launches (intermediates between them) is one item running all of them.
int32_t tableKernel(const void* args, uint32_t blockIdx, uint32_t blockDim) {
  const auto* words = static_cast<const uint64_t*>(args);
  const uint64_t count = words[0];
  const uint64_t begin = count * blockIdx / blockDim, end = count * (blockIdx + 1) / blockDim;
  for (uint64_t k = begin; k < end; ++k) {
    const uint64_t first = words[1 + 2 * k], steps = words[2 + 2 * k];
    for (uint64_t j = 0; j < steps; ++j) {
      const uint64_t* step = words + first + j * kWordsPerStep;
      auto fn = reinterpret_cast<aclrtKernelFunc>(step[0]);
      int32_t rc = fn(words + step[2], static_cast<uint32_t>(step[1] >> 32), static_cast<uint32_t>(step[1]));
      if (rc != 0) return rc;
    }
  }
  return 0;
}

// The runtime copies at most this many argument bytes per launch (runtime/src/launch.cpp).
constexpr size_t kMaxInlineArgs = size_t(64) << 10;

// A table too large to pass inline: the launch's argument is a pointer to it (freed by the runtime
// once the launch has run, or with the graph that captured it).
int32_t tableKernelIndirect(const void* args, uint32_t blockIdx, uint32_t blockDim) {
  const std::vector<uint64_t>* table = *static_cast<const std::vector<uint64_t>* const*>(args);
  return tableKernel(table->data(), blockIdx, blockDim);
}

c10::OperatorHandle findOp(const std::string& qualified) {
  size_t dot = qualified.find('.');
  auto op = c10::Dispatcher::singleton().findSchema(
      {qualified.substr(0, dot), dot == std::string::npos ? "" : qualified.substr(dot + 1)});
  TORCH_CHECK(op.has_value(), "multi-tensor launch: no operator ", qualified, "\n",
              errCode(SubModule::OPS, ErrCode::NOT_FOUND));
  return *op;
}

bool isNpu(const at::Tensor& t) { return t.defined() && t.device().type() == c10::DeviceType::PrivateUse1; }

bool sameNumber(const c10::IValue& a, const c10::IValue& b) {
  if (a.isDouble() || b.isDouble()) return a.isDouble() && b.isDouble() && a.toDouble() == b.toDouble();
  if (a.isInt() || b.isInt()) return a.isInt() && b.isInt() && a.toInt() == b.toInt();
  if (a.isBool() || b.isBool()) return a.isBool() && b.isBool() && a.toBool() == b.toBool();
  return false;
}

const at::Tensor& leadTensor(const std::vector<MultiTensorArg>& args, size_t i) {
  auto lead = std::find_if(args.begin(), args.end(), [](const MultiTensorArg& a) { return a.kind == Kind::Chunked; });
  return lead->list[i];
}

// A result of zero elements: dropped (see multiTensorApply).
bool dropped(const eager::OutputSpec& output) {
  return std::find(output.sizes.begin(), output.sizes.end(), 0) != output.sizes.end();
}

// The per-tensor call of item i; chunked lists give the 1-d view of their first `length` elements
// (only the key and the compile read it) or, with length < 0, the whole tensor.
torch::jit::Stack itemStack(const std::vector<MultiTensorArg>& args, size_t i, int64_t length) {
  torch::jit::Stack stack;
  stack.reserve(args.size());
  for (const MultiTensorArg& arg : args) {
    switch (arg.kind) {
      case Kind::Chunked: {
        const at::Tensor& t = arg.list[i];
        stack.emplace_back(length < 0 ? t : at::as_strided(t, {length}, {1}, t.storage_offset()));
        break;
      }
      case Kind::PerTensor:
        stack.emplace_back(arg.list[i]);
        break;
      case Kind::Shared:
        stack.push_back(arg.value);
        break;
      case Kind::SharedChunk: {
        const at::Tensor& t = arg.value.toTensor();
        if (length >= 0) {
          stack.emplace_back(at::as_strided(t, {length}, {1}, t.storage_offset()));
        } else {
          const at::Tensor& whole = leadTensor(args, i);
          stack.emplace_back(at::full(whole.sizes(), t.flatten()[0].item(), t.options()));
        }
        break;
      }
      case Kind::PerTensorValue:
        stack.push_back(arg.values[i]);
        break;
    }
  }
  return stack;
}

// Whether item i can join a table launch; `group` gets its device and dtypes (its launch group).
bool tableable(const std::vector<MultiTensorArg>& args, size_t lead, size_t i, std::vector<int>& group) {
  const at::Tensor& first = args[lead].list[i];
  if (!isNpu(first) || first.numel() == 0) return false;
  group.push_back(first.device().index());
  for (const MultiTensorArg& arg : args) {
    if (arg.kind == Kind::Chunked || arg.kind == Kind::PerTensor) {
      const at::Tensor& t = arg.list[i];
      if (!isNpu(t) || t.device() != first.device() || internalDesc(t) != nullptr) return false;
      if (arg.kind == Kind::Chunked && (!t.is_contiguous() || t.sizes() != first.sizes())) return false;
      group.push_back(static_cast<int>(t.scalar_type()));
    } else if ((arg.kind == Kind::Shared || arg.kind == Kind::SharedChunk) && arg.value.isTensor()) {
      const at::Tensor& t = arg.value.toTensor();
      if (isNpu(t) && t.device() != first.device()) return false;
    }
  }
  return true;
}

// Where result k goes: the index of the chunked list it is written into, or -1 (a fresh tensor).
int destination(const KernelRecord& record, const std::vector<int>& writes, size_t k) {
  if (!writes.empty()) return writes[k];
  const eager::OutputTarget& target = record.targets[k];
  return target.ref.arg;
}

// The record of one chunk length, checked to be a single launch the table can run.
struct ChunkKernel {
  std::shared_ptr<const CacheEntry> entry;
  const KernelRecord* record = nullptr;
};

// `cached`: the record was in the cache already (no compile).
bool chunkKernel(const eager::OpInfo& info, const std::vector<MultiTensorArg>& args, const std::vector<size_t>& items,
                 size_t rep, int64_t length, const std::vector<int>& writes, ChunkKernel& out, bool& cached) {
  torch::jit::Stack stack = itemStack(args, rep, length);
  std::string key;
  if (!eager::buildKey(info, stack, 0, key)) return false;
  cached = eager::lookup(key) != nullptr;
  std::shared_ptr<const CacheEntry> entry = eager::resolve(info, stack, 0, key);
  if (!entry || entry->kind != CacheEntry::Kind::Kernel) return false;
  // A value compiled into the kernel must be every item's.
  std::shared_ptr<const CacheEntry> head = eager::lookup(key);
  if (head && head->kind == CacheEntry::Kind::Baked) {
    for (int a : head->bakedArgs) {
      if (args[a].kind != Kind::PerTensorValue) continue;
      for (size_t i : items) {
        if (!sameNumber(args[a].values[i], args[a].values[rep])) return false;
      }
    }
  }
  const KernelRecord& record = *entry->kernel;
  if (record.launches.empty()) return false;
  if (!writes.empty() && writes.size() != record.outputs.size()) return false;
  // The launches of a chunk run in order, each result written straight into its destination: no
  // launch may read a tensor an earlier one has already written a result into.
  auto storage = [&](int arg) -> const void* {
    const MultiTensorArg& a = args[arg];
    if (a.kind == Kind::Chunked || a.kind == Kind::PerTensor) return a.list[rep].const_data_ptr();
    return a.value.isTensor() ? a.value.toTensor().const_data_ptr() : nullptr;
  };
  std::vector<const void*> overwritten;
  for (const eager::Launch& launch : record.launches) {
    for (const LaunchArg& slot : launch.args) {
      if (slot.kind != LaunchArg::Kind::Input) continue;
      const void* p = storage(record.inputs[slot.index].arg);
      if (p != nullptr && std::find(overwritten.begin(), overwritten.end(), p) != overwritten.end()) return false;
    }
    for (const LaunchArg& slot : launch.args) {
      if (slot.kind != LaunchArg::Kind::Output) continue;
      if (dropped(record.outputs[slot.index])) return false;  // a dropped result has no buffer
      const int dest = destination(record, writes, slot.index);
      if (dest >= 0) overwritten.push_back(storage(dest));
    }
  }
  for (size_t k = 0; k < record.outputs.size(); ++k) {
    int dest = destination(record, writes, k);
    if (dropped(record.outputs[k]) && dest < 0) continue;
    if (record.outputs[k].sizes != std::vector<int64_t>{length}) return false;
    if (dest < 0) continue;
    if (args[dest].kind != Kind::Chunked || (writes.empty() && record.targets[k].ref.element >= 0)) return false;
    if (args[dest].list[rep].scalar_type() != record.outputs[k].dtype) return false;
  }
  for (const eager::ArgRef& ref : record.inputs) {
    if (ref.element >= 0 || args[ref.arg].kind == Kind::PerTensorValue) return false;
  }
  for (const eager::ArgRef& ref : record.params) {
    if (args[ref.arg].kind == Kind::Chunked || args[ref.arg].kind == Kind::PerTensor) return false;
  }
  out = {std::move(entry), &record};
  return true;
}

uint64_t address(const at::Tensor& t, int64_t elementOffset) {
  return reinterpret_cast<uint64_t>(static_cast<const char*>(t.const_data_ptr()) + elementOffset * t.element_size());
}

// One table launch for `items`; false (nothing launched) if the per-tensor records do not fit it.
bool launchGroup(const eager::OpInfo& info, const eager::OpInfo& launchInfo, const std::vector<MultiTensorArg>& args,
                 size_t lead, const std::vector<size_t>& items, const std::vector<int>& writes,
                 std::vector<std::vector<at::Tensor>>& results) {
  std::map<int64_t, size_t> repOf;  // chunk length -> an item that has a chunk of it
  for (size_t i : items) {
    int64_t n = args[lead].list[i].numel();
    if (n >= kChunkElements) repOf.emplace(kChunkElements, i);
    if (n % kChunkElements) repOf.emplace(n % kChunkElements, i);
  }
  std::map<int64_t, ChunkKernel> kernels;
  bool pipeline = true, hit = true;
  // The chunk lengths' misses are built at once, in the background (eager/CompileMiss.h): chunkKernel
  // waits for each, where one miss after the other left all but one compile worker idle.
  std::set<int64_t> missed;
  for (const auto& [length, rep] : repOf) {
    torch::jit::Stack stack = itemStack(args, rep, length);
    std::string key;
    if (!eager::buildKey(info, stack, 0, key) || eager::lookup(key) != nullptr) continue;
    missed.insert(length);
    eager::resolve(info, stack, 0, key, /*mayDefer=*/true);
  }
  for (const auto& [length, rep] : repOf) {
    ChunkKernel kernel;
    bool cached = false;
    if (!chunkKernel(info, args, items, rep, length, writes, kernel, cached)) return false;
    hit = hit && cached && missed.count(length) == 0;
    pipeline = pipeline && kernel.record->pipeline;
    kernels.emplace(length, std::move(kernel));
  }
  const KernelRecord& any = *kernels.begin()->second.record;
  const at::Tensor& first = args[lead].list[items.front()];
  // Fresh results and intermediates go on the group's device.
  c10::OptionalDeviceGuard guard;
  if (first.device().index() != currentDevice()) guard.reset_device(first.device());
  for (size_t i : items) {
    for (size_t k = 0; k < any.outputs.size(); ++k) {
      if (destination(any, writes, k) >= 0) continue;
      const bool none = dropped(any.outputs[k]);
      results[i][k] = at::detail::empty_generic(none ? c10::IntArrayRef{0} : args[lead].list[i].sizes(), npuAllocator(),
                                                c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                                any.outputs[k].dtype, std::nullopt);
    }
  }

  // Intermediates: each chunk gets its own, cut from one buffer (freed at return, reused only in stream order).
  constexpr int64_t kTempAlign = 512;
  auto aligned = [](int64_t bytes) { return (bytes + kTempAlign - 1) / kTempAlign * kTempAlign; };
  int64_t tempTotal = 0;
  for (size_t i : items) {
    const int64_t n = args[lead].list[i].numel();
    for (int64_t offset = 0; offset < n; offset += kChunkElements) {
      for (int64_t bytes : kernels.at(std::min(kChunkElements, n - offset)).record->tempBytes) tempTotal += aligned(bytes);
    }
  }
  at::Tensor temps;
  if (tempTotal > 0) {
    temps = at::detail::empty_generic({tempTotal}, npuAllocator(), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                      at::kByte, std::nullopt);
  }
  uint8_t* nextTemp = temps.defined() ? static_cast<uint8_t*>(temps.data_ptr()) : nullptr;

  // Per item (first step's word offset in stepWords, step count); offsets become table offsets below.
  std::vector<uint64_t> itemWords, stepWords, slots;
  std::vector<at::Tensor> written;
  std::vector<uint64_t> chunkTemps;
  for (size_t i : items) {
    const int64_t n = args[lead].list[i].numel();
    for (int64_t offset = 0; offset < n; offset += kChunkElements) {
      const KernelRecord& record = *kernels.at(std::min(kChunkElements, n - offset)).record;
      chunkTemps.clear();
      for (int64_t bytes : record.tempBytes) {
        chunkTemps.push_back(reinterpret_cast<uint64_t>(nextTemp));
        nextTemp += aligned(bytes);
      }
      const bool oneLaunch = record.launches.size() == 1;
      if (!oneLaunch) itemWords.insert(itemWords.end(), {stepWords.size(), 0});
      for (const eager::Launch& launch : record.launches) {
        const uint64_t slotStart = slots.size();
        for (const LaunchArg& slot : launch.args) {
          switch (slot.kind) {
            case LaunchArg::Kind::Input: {
              const MultiTensorArg& arg = args[record.inputs[slot.index].arg];
              if (arg.kind == Kind::Shared || arg.kind == Kind::SharedChunk) {
                slots.push_back(address(arg.value.toTensor(), 0));
              } else {
                slots.push_back(address(arg.list[i], arg.kind == Kind::Chunked ? offset : 0));
              }
              break;
            }
            case LaunchArg::Kind::Output: {
              int dest = destination(record, writes, slot.index);
              slots.push_back(address(dest >= 0 ? args[dest].list[i] : results[i][slot.index], offset));
              break;
            }
            case LaunchArg::Kind::Param: {
              const MultiTensorArg& arg = args[record.params[slot.index].arg];
              const c10::IValue& value = arg.kind == Kind::PerTensorValue ? arg.values[i] : arg.value;
              slots.push_back(eager::paramSlot(value, record.paramIsFloat[slot.index]));
              break;
            }
            case LaunchArg::Kind::Temp:
              slots.push_back(chunkTemps[slot.index]);
              break;
          }
        }
        for (uint32_t b = 0; b < launch.blockDim; ++b) {
          if (oneLaunch) itemWords.insert(itemWords.end(), {stepWords.size(), 1});
          stepWords.insert(stepWords.end(), {reinterpret_cast<uint64_t>(launch.fn),
                                             static_cast<uint64_t>(b) << 32 | launch.blockDim, slotStart});
          if (!oneLaunch) ++itemWords.back();
        }
      }
    }
    for (size_t k = 0; k < any.outputs.size(); ++k) {
      int dest = destination(any, writes, k);
      if (dest >= 0 || !dropped(any.outputs[k])) written.push_back(dest >= 0 ? args[dest].list[i] : results[i][k]);
    }
  }
  const uint64_t count = itemWords.size() / 2;
  const uint64_t stepBase = 1 + itemWords.size(), slotBase = stepBase + stepWords.size();
  std::vector<uint64_t> table;
  table.reserve(slotBase + slots.size());
  table.push_back(count);
  for (size_t w = 0; w < itemWords.size(); w += 2) {
    table.insert(table.end(), {stepBase + itemWords[w], itemWords[w + 1]});
  }
  for (size_t w = 0; w < stepWords.size(); w += kWordsPerStep) {
    table.insert(table.end(), {stepWords[w], stepWords[w + 1], slotBase + stepWords[w + 2]});
  }
  table.insert(table.end(), slots.begin(), slots.end());

  c10::Stream stream = getCurrentStream(first.device().index());
  const uint32_t blocks = static_cast<uint32_t>(std::min(count, kMaxTableBlocks));
  const char* name = any.launches.front().symbol.c_str();
  if (table.size() * sizeof(uint64_t) <= kMaxInlineArgs) {
    NPU_CHECK_ACL(aclrtLaunchKernel(&tableKernel, blocks, table.data(), table.size() * sizeof(uint64_t), name,
                                    nativeStream(stream)));
  } else {
    auto* owned = new std::vector<uint64_t>(std::move(table));
    aclError launched = aclrtLaunchKernel(&tableKernelIndirect, blocks, &owned, sizeof(owned), name, nativeStream(stream));
    if (launched != ACL_SUCCESS) delete owned;
    NPU_CHECK_ACL(launched);
    // A host function queued after the launch owns the table: released once the launch has run.
    NPU_CHECK_ACL(npurtLaunchHostFuncOwned(
        nativeStream(stream), [](void*) -> int32_t { return 0; }, owned,
        [](void* table) { delete static_cast<std::vector<uint64_t>*>(table); }));
  }
  // The launch is counted on the op that made it: a hit when every chunk kernel was cached.
  ++(hit ? launchInfo.stats.hits : launchInfo.stats.misses);
  ++launchInfo.stats.compiled;
  if (pipeline) ++launchInfo.stats.pipeline;
  if (overflowCheckArmed()) checkResultsForOverflow(written, stream);
  return true;
}

// Item i through the dispatcher, as a call of the per-tensor op.
void runOne(const c10::OperatorHandle& op, const std::vector<MultiTensorArg>& args, size_t i,
            const std::vector<int>& writes, std::vector<std::vector<at::Tensor>>& results) {
  torch::jit::Stack stack = itemStack(args, i, -1);
  op.callBoxed(&stack);
  const auto& returns = op.schema().returns();
  for (size_t k = 0; k < stack.size(); ++k) {
    const at::Tensor& value = stack[k].toTensor();
    if (writes.empty()) {
      if (returns[k].alias_info() == nullptr) results[i][k] = value;
    } else if (writes[k] < 0) {
      results[i][k] = value;
    } else if (!value.is_same(args[writes[k]].list[i])) {
      args[writes[k]].list[i].copy_(value);
    }
  }
}

}  // namespace

std::vector<std::vector<at::Tensor>> multiTensorApply(const std::string& launchedBy, const std::string& perTensorOp,
                                                      const std::vector<MultiTensorArg>& args,
                                                      const std::vector<int>& writes, bool elementwise) {
  c10::OperatorHandle op = findOp(perTensorOp);
  const eager::OpInfo& info = eager::opInfo(op);
  const eager::OpInfo& launchInfo = eager::opInfo(findOp(launchedBy));
  TORCH_INTERNAL_ASSERT(args.size() == op.schema().arguments().size(), perTensorOp, " takes ",
                        op.schema().arguments().size(), " arguments, the multi-tensor launch gave ", args.size());
  auto lead = std::find_if(args.begin(), args.end(), [](const MultiTensorArg& a) { return a.kind == Kind::Chunked; });
  TORCH_INTERNAL_ASSERT(lead != args.end(), "a multi-tensor launch needs a chunked list");
  const size_t leadIndex = static_cast<size_t>(lead - args.begin());
  const size_t n = lead->list.size();
  std::vector<std::vector<at::Tensor>> results(n, std::vector<at::Tensor>(op.schema().returns().size()));

  // Items grouped by device and dtypes (one launch each); the rest run one by one.
  std::map<std::vector<int>, std::vector<size_t>> groups;
  std::vector<size_t> single;
  const bool inPlaceSafe = elementwise || info.pointwise;
  for (size_t i = 0; i < n; ++i) {
    std::vector<int> group;
    if (inPlaceSafe && tableable(args, leadIndex, i, group)) {
      groups[group].push_back(i);
    } else {
      single.push_back(i);
    }
  }
  for (const auto& [group, items] : groups) {
    if (!launchGroup(info, launchInfo, args, leadIndex, items, writes, results)) {
      single.insert(single.end(), items.begin(), items.end());
    }
  }
  std::sort(single.begin(), single.end());
  for (size_t i : single) runOne(op, args, i, writes, results);
  return results;
}

}  // namespace torch_npu::native
