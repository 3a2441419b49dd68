#include "torch_npu/csrc/eager/KernelCache.h"

#include <ATen/Dispatch.h>
#include <ATen/EmptyTensor.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <c10/util/SmallVector.h>

#include <array>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/aten/CpuFallback.h"
#include "torch_npu/csrc/core/NpuAllocator.h"
#include "torch_npu/csrc/core/NpuFormat.h"

namespace torch_npu::eager {
namespace {

std::mutex opInfoMutex;
std::unordered_map<const void*, std::unique_ptr<OpInfo>> opInfos;

std::mutex cacheMutex;
std::unordered_map<std::string, std::shared_ptr<const CacheEntry>> cache;
// Bumped (under cacheMutex) by every store and clear: a thread's recent lookups below hold while it is unchanged.
std::atomic<uint64_t> cacheGeneration{0};

// The calling thread's last few hits: a loop of ops finds its entries without the shared map's mutex
// and hash. Their keys' buffers are reused, so remembering a hit allocates nothing once warm.
struct RecentHit {
  uint64_t generation = ~uint64_t(0);
  std::string key;
  std::shared_ptr<const CacheEntry> entry;
};
constexpr size_t kRecentHits = 8;
thread_local std::array<RecentHit, kRecentHits> recentHits;
thread_local size_t nextRecentHit = 0;

template <typename T>
void appendRaw(std::string& key, T value) {
  key.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

bool isNpu(const at::Tensor& t) { return t.device().type() == c10::DeviceType::PrivateUse1; }

bool appendTensor(const at::Tensor& t, std::string& key) {
  if (!t.defined()) {
    key.push_back('u');
    return true;
  }
  if (t.is_conj() || t.is_neg() || t.layout() != c10::kStrided) return false;
  if (isNpu(t)) {
    key.push_back('T');
    appendRaw(key, static_cast<int8_t>(t.scalar_type()));
    appendRaw(key, static_cast<int8_t>(t.dim()));
    for (int64_t s : t.sizes()) appendRaw(key, s);
    for (int64_t s : t.strides()) appendRaw(key, s);
    if (const NpuStorageDesc* desc = internalDesc(t)) {
      // The kernel reads the physical layout; a partial view of it has none (the fallback explains).
      if (!isFormattedView(t, *desc)) return false;
      key.push_back('F');
      appendRaw(key, static_cast<int8_t>(desc->npuFormat));
    }
    return true;
  }
  // A CPU 0-d tensor (a Python number wrapped by torch, or torch.tensor(2.0)) is a value, read on the host.
  if (!t.device().is_cpu() || t.dim() != 0) return false;
  key.push_back('S');
  appendRaw(key, static_cast<int8_t>(t.scalar_type()));
  key.push_back(t.unsafeGetTensorImpl()->is_wrapped_number() ? 'w' : 't');
  return true;
}

bool appendValue(const c10::IValue& v, bool scalarLike, std::string& key) {
  if (v.isTensor()) return appendTensor(v.toTensor(), key);
  if (v.isNone()) {
    key.push_back('N');
  } else if (v.isDouble()) {
    key.push_back('d');  // always a parameter candidate: its value is never structural
  } else if (v.isInt()) {
    key.push_back(scalarLike ? 'i' : 'I');
    if (!scalarLike) appendRaw(key, v.toInt());
  } else if (v.isBool()) {
    key.push_back(v.toBool() ? 'B' : 'b');
  } else if (v.isIntList()) {
    key.push_back('L');
    auto list = v.toIntList();
    appendRaw(key, static_cast<int32_t>(list.size()));
    for (int64_t x : list) appendRaw(key, x);
  } else if (v.isDoubleList()) {
    key.push_back('F');
    auto list = v.toDoubleList();
    appendRaw(key, static_cast<int32_t>(list.size()));
    for (double x : list) appendRaw(key, x);
  } else if (v.isBoolList()) {
    key.push_back('M');
    for (bool x : v.toBoolList()) key.push_back(x ? '1' : '0');
    key.push_back(';');
  } else if (v.isString()) {
    key.push_back('s');
    key.append(v.toStringRef());
    key.push_back('\0');
  } else if (v.isTensorList()) {
    key.push_back('l');
    auto list = v.toTensorList();
    appendRaw(key, static_cast<int32_t>(list.size()));
    for (const at::Tensor& t : list) {
      if (!appendTensor(t, key)) return false;
    }
  } else if (v.isOptionalTensorList()) {
    key.push_back('o');
    auto list = v.toOptionalTensorList();
    appendRaw(key, static_cast<int32_t>(list.size()));
    for (const std::optional<at::Tensor>& t : list) {
      if (!appendTensor(t.value_or(at::Tensor()), key)) return false;
    }
  } else if (v.isDevice()) {
    key.push_back('D');
    appendRaw(key, static_cast<int8_t>(v.toDevice().type()));
  } else {
    return false;  // complex scalars, generators, ...: no kernel takes them
  }
  return true;
}

double cpuScalarValue(const at::Tensor& t) {
  double value = 0;
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, t.scalar_type(), "cpuScalarValue",
                             [&] { value = static_cast<double>(*t.const_data_ptr<scalar_t>()); });
  return value;
}

}  // namespace

const OpInfo& opInfo(const c10::OperatorHandle& op) {
  // Loops call one op many times: skip the shared map then (OpInfos are never freed).
  thread_local const void* lastSchema = nullptr;
  thread_local const OpInfo* lastInfo = nullptr;
  if (&op.schema() == lastSchema) return *lastInfo;
  std::lock_guard<std::mutex> lock(opInfoMutex);
  std::unique_ptr<OpInfo>& slot = opInfos[&op.schema()];
  lastSchema = &op.schema();
  if (slot) {
    lastInfo = slot.get();
    return *slot;
  }
  slot = std::make_unique<OpInfo>();
  const c10::FunctionSchema& schema = op.schema();
  slot->name = schema.name() + (schema.overload_name().empty() ? "" : "." + schema.overload_name());
  slot->pointwise = op.hasTag(at::Tag::pointwise);
  const std::string& cpuArgument = cpuTensorArgument(schema.name());
  for (size_t i = 0; i < schema.arguments().size(); ++i) {
    const c10::Argument& arg = schema.arguments()[i];
    if (arg.name() == "indices" && cpuArgument == "indices") slot->cpuIndices = static_cast<int>(i);
    c10::TypePtr type = arg.real_type();
    if (auto optional = type->cast<c10::OptionalType>()) type = optional->getElementType();
    slot->scalarLike.push_back(type->kind() == c10::TypeKind::NumberType ||
                               type->kind() == c10::TypeKind::FloatType);
    bool written = arg.alias_info() != nullptr && arg.alias_info()->isWrite();
    slot->isOut.push_back(written && arg.is_out());
  }
  lastInfo = slot.get();
  return *slot;
}

bool buildKey(const OpInfo& info, const torch::jit::Stack& stack, size_t argBase, std::string& key) {
  key.append(info.name);
  key.push_back('\0');
  for (size_t i = 0; i < info.isOut.size(); ++i) {
    if (info.isOut[i]) continue;
    if (!appendValue(stack[argBase + i], info.scalarLike[i], key)) return false;
  }
  return true;
}

void appendBakedValues(const torch::jit::Stack& stack, size_t argBase, const std::vector<int>& args,
                       std::string& key) {
  key.push_back('|');
  for (int i : args) {
    const c10::IValue& v = stack[argBase + i];
    if (v.isTensor()) {
      appendRaw(key, cpuScalarValue(v.toTensor()));
    } else if (v.isDouble()) {
      appendRaw(key, v.toDouble());
    } else if (v.isInt()) {
      appendRaw(key, v.toInt());
    } else {
      key.push_back('?');
    }
  }
}

void launchRecord(const OpInfo& info, const KernelRecord& record, c10::ArrayRef<at::Tensor> inputs,
                  c10::ArrayRef<at::Tensor> results, c10::ArrayRef<uint64_t> params, aclrtStream stream) {
  if (record.pipeline) ++info.stats.pipeline;
  if (record.launches.empty()) return;
  // Freed at return, before the launches run: the allocator reuses a block only in stream order.
  c10::SmallVector<at::Tensor, 4> temps;
  for (int64_t bytes : record.tempBytes) {
    temps.push_back(at::detail::empty_generic({bytes}, npuAllocator(), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                              at::kByte, std::nullopt));
  }
  c10::SmallVector<uint64_t, 16> slots;
  for (const Launch& launch : record.launches) {
    slots.clear();
    for (const LaunchArg& arg : launch.args) {
      switch (arg.kind) {
        case LaunchArg::Kind::Input:
          slots.push_back(reinterpret_cast<uint64_t>(inputs[arg.index].const_data_ptr()));
          break;
        case LaunchArg::Kind::Output:
          slots.push_back(reinterpret_cast<uint64_t>(results[arg.index].data_ptr()));
          break;
        case LaunchArg::Kind::Temp:
          slots.push_back(reinterpret_cast<uint64_t>(temps[arg.index].data_ptr()));
          break;
        case LaunchArg::Kind::Param:
          slots.push_back(params[arg.index]);
          break;
      }
    }
    // The runtime copies the slots when it queues the task, so one buffer serves every launch.
    NPU_CHECK_ACL(aclrtLaunchKernel(launch.fn, launch.blockDim, slots.data(), slots.size() * sizeof(uint64_t),
                                    launch.symbol.c_str(), stream));
  }
}

std::shared_ptr<const CacheEntry> lookup(const std::string& key) {
  const uint64_t generation = cacheGeneration.load(std::memory_order_acquire);
  for (const RecentHit& hit : recentHits) {
    if (hit.generation == generation && hit.key == key) return hit.entry;
  }
  std::shared_ptr<const CacheEntry> entry;
  {
    std::lock_guard<std::mutex> lock(cacheMutex);
    auto it = cache.find(key);
    if (it == cache.end()) return nullptr;
    entry = it->second;
  }
  // Tagged with the generation read before the find: a store or clear since then invalidates it.
  RecentHit& slot = recentHits[nextRecentHit++ % kRecentHits];
  slot.generation = generation;
  slot.key = key;
  slot.entry = entry;
  return entry;
}

void store(const std::string& key, std::shared_ptr<const CacheEntry> entry) {
  std::lock_guard<std::mutex> lock(cacheMutex);
  cache[key] = std::move(entry);
  cacheGeneration.fetch_add(1, std::memory_order_release);
}

void clearMemoryCache() {
  std::lock_guard<std::mutex> lock(cacheMutex);
  cache.clear();
  cacheGeneration.fetch_add(1, std::memory_order_release);
}

size_t cachedKeyCount() {
  std::lock_guard<std::mutex> lock(cacheMutex);
  return cache.size();
}

std::map<std::string, StatsRow> statsSnapshot() {
  std::lock_guard<std::mutex> lock(opInfoMutex);
  std::map<std::string, StatsRow> rows;
  for (const auto& [schema, info] : opInfos) {
    const OpStats& s = info->stats;
    rows[info->name] = {s.hits.load(), s.misses.load(), s.compiled.load(), s.fallback.load(), s.view.load(),
                        s.pipeline.load(), static_cast<double>(s.compileMicros.load()) / 1e3, s.fallbackReason(),
                        s.linalgReason()};
  }
  return rows;
}

void resetStats() {
  std::lock_guard<std::mutex> lock(opInfoMutex);
  for (auto& [schema, info] : opInfos) {
    OpStats& s = info->stats;
    s.hits = 0;
    s.misses = 0;
    s.compiled = 0;
    s.fallback = 0;
    s.view = 0;
    s.pipeline = 0;
    s.compileMicros = 0;
    s.noteFallbackReason("");
    s.noteLinalgReason("");
  }
}

}  // namespace torch_npu::eager
