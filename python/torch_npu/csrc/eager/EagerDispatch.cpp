#include "torch_npu/csrc/eager/EagerDispatch.h"

#include <ATen/Dispatch.h>
#include <ATen/EmptyTensor.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/ScopeExit.h>
#include <c10/util/SmallVector.h>

#include <cstring>

#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/aten/CpuFallback.h"
#include "torch_npu/csrc/core/NpuAllocator.h"
#include "torch_npu/csrc/core/NpuDevice.h"
#include "torch_npu/csrc/core/NpuFormat.h"
#include "torch_npu/csrc/core/NpuStream.h"
#include "torch_npu/csrc/eager/CompileMiss.h"
#include "torch_npu/csrc/eager/KernelCache.h"
#include "torch_npu/csrc/eager/UnboxedKernel.h"
#include "torch_npu/csrc/npu/OverflowCheck.h"

namespace torch_npu::eager {
namespace {

constexpr c10::DispatchKeySet kNpuKeys{c10::DispatchKey::PrivateUse1};

const std::string& nonCompilableArgument() {
  static const std::string reason =
      "an argument no kernel takes: a CPU tensor with more than one element, a conjugate/negative view, a "
      "sparse tensor, a partial view of an internal-format tensor, a complex scalar or a generator";
  return reason;
}

// torch.cuda's indexing copies CPU indices to the device: so does this, where the kernel takes them (a
// CPU index tensor is no kernel argument). True if one moved.
bool moveCpuIndices(const OpInfo& info, torch::jit::Stack& stack, size_t argBase) {
  if (info.cpuIndices < 0) return false;
  c10::IValue& v = stack[argBase + info.cpuIndices];
  const c10::IValue& self = stack[argBase];
  if (!v.isOptionalTensorList() || !self.isTensor() || self.toTensor().device().type() != c10::DeviceType::PrivateUse1) {
    return false;
  }
  c10::List<std::optional<at::Tensor>> moved;
  bool any = false;
  for (const std::optional<at::Tensor>& t : v.toOptionalTensorList()) {
    bool onCpu = t.has_value() && t->defined() && t->device().is_cpu();
    moved.push_back(onCpu ? std::optional<at::Tensor>(t->to(self.toTensor().device())) : t);
    any = any || onCpu;
  }
  if (any) v = std::move(moved);
  return any;
}

}  // namespace

// Declared in EagerDispatch.h (multi-tensor launches resolve their records through it too).
std::shared_ptr<const CacheEntry> resolve(const OpInfo& info, const torch::jit::Stack& stack, size_t argBase,
                                          const std::string& key, bool mayDefer) {
  std::shared_ptr<const CacheEntry> entry = lookup(key);
  std::string full;
  if (entry && entry->kind == CacheEntry::Kind::Baked) {
    full = key;
    appendBakedValues(stack, argBase, entry->bakedArgs, full);
    entry = lookup(full);
  }
  if (entry) {
    ++info.stats.hits;
    // Still being built: this call waits on its stream too, or here.
    if (entry->kind == CacheEntry::Kind::Kernel && entry->kernel->pending &&
        !(mayDefer && deferrable(info, stack, argBase))) {
      return awaitCompile(*entry->kernel->pending);
    }
    return entry;
  }
  ++info.stats.misses;
  MissResult miss = compileMiss(info, stack, argBase, key, mayDefer && deferrable(info, stack, argBase));
  if (miss.bakedArgs.empty()) {
    eager::store(key, miss.entry);
  } else {
    auto baked = std::make_shared<CacheEntry>();
    baked->kind = CacheEntry::Kind::Baked;
    baked->bakedArgs = miss.bakedArgs;
    eager::store(key, baked);
    full = key;
    appendBakedValues(stack, argBase, miss.bakedArgs, full);
    eager::store(full, miss.entry);
  }
  if (miss.entry->kind == CacheEntry::Kind::Kernel && miss.entry->kernel->pending) pendingStored(*miss.entry);
  return miss.entry;
}

namespace {
// A CPU 0-d tensor is read directly: item() would go through the dispatcher on every call.
template <typename T>
T hostValue(const at::Tensor& t) {
  T value{};
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, t.scalar_type(), "hostValue",
                             [&] { value = static_cast<T>(*t.const_data_ptr<scalar_t>()); });
  return value;
}
}  // namespace

uint64_t paramSlot(const c10::IValue& v, bool isFloat) {
  uint64_t slot = 0;
  if (isFloat) {
    double value = v.isTensor() ? hostValue<double>(v.toTensor()) : v.toScalar().toDouble();
    std::memcpy(&slot, &value, sizeof(value));
  } else {
    int64_t value = v.isTensor() ? hostValue<int64_t>(v.toTensor()) : v.toScalar().toLong();
    std::memcpy(&slot, &value, sizeof(value));
  }
  return slot;
}

namespace {

// The kernel may write straight into `target` only when no input overlaps it, except an
// input that is exactly `target` of a pointwise op (element i is read before it is written).
bool canWriteInto(const at::Tensor& target, const OutputSpec& spec, const OpInfo& info,
                  c10::ArrayRef<at::Tensor> inputs) {
  // Results are base format: an internal-format target is written by a converting copy_.
  bool laidOut = spec.strides.empty() ? target.is_contiguous() : target.strides() == c10::IntArrayRef(spec.strides);
  if (target.scalar_type() != spec.dtype || target.sizes() != c10::IntArrayRef(spec.sizes) || !laidOut ||
      internalDesc(target) != nullptr) {
    return false;
  }
  const void* storage = target.storage().data();
  for (const at::Tensor& in : inputs) {
    if (in.storage().data() != storage) continue;
    bool same = in.data_ptr() == target.data_ptr() && in.sizes() == target.sizes() && in.strides() == target.strides();
    if (!(same && info.pointwise)) return false;
  }
  return true;
}

// A call's input tensors for its launch, borrowed from its arguments where they are tensors (no
// reference count traffic, see UnboxedKernel.h) and released without a decref, also when the call
// throws; an element of a tensor list is a reference of its own.
class CallInputs {
 public:
  CallInputs() = default;
  CallInputs(const CallInputs&) = delete;
  CallInputs& operator=(const CallInputs&) = delete;
  ~CallInputs() {
    for (size_t i = 0; i < tensors_.size(); ++i) {
      if (borrowed_[i]) c10::MaybeOwnedTraits<at::Tensor>::destroyBorrow(tensors_[i]);
    }
  }
  void add(const torch::jit::Stack& stack, size_t argBase, const ArgRef& ref) {
    const c10::IValue& v = stack[argBase + ref.arg];
    borrowed_.push_back(ref.element < 0);
    if (ref.element < 0) {
      tensors_.push_back(c10::MaybeOwnedTraits<at::Tensor>::createBorrow(v.toTensor()));
    } else if (v.isTensorList()) {
      tensors_.push_back(v.toTensorList().get(ref.element));
    } else {
      tensors_.push_back(v.toOptionalTensorList().get(ref.element).value());
    }
  }
  c10::ArrayRef<at::Tensor> tensors() const { return tensors_; }

 private:
  c10::SmallVector<at::Tensor, 8> tensors_;
  c10::SmallVector<bool, 8> borrowed_;
};

at::Tensor argumentTensor(const torch::jit::Stack& stack, size_t argBase, const ArgRef& ref) {
  const c10::IValue& v = stack[argBase + ref.arg];
  if (ref.element < 0) return v.toTensor();
  if (v.isTensorList()) return v.toTensorList().get(ref.element);
  // A Tensor?[] (index.Tensor's indices): the plan numbers its elements None ones included.
  return v.toOptionalTensorList().get(ref.element).value();
}

// A fresh result as the op gives it on CPU: row-major, or with the strides of its memory order.
at::Tensor allocate(const OutputSpec& spec) {
  if (spec.strides.empty()) return at::detail::empty_generic(spec.sizes, npuAllocator(), kNpuKeys, spec.dtype, std::nullopt);
  return at::detail::empty_strided_generic(spec.sizes, spec.strides, npuAllocator(), kNpuKeys, spec.dtype);
}

using Returns = c10::SmallVector<c10::IValue, 4>;

// A call's small vectors live on the stack: the hit path allocates only its results. Leaves the
// arguments on `stack` (the caller drops them) and gives the op's returns.
Returns run(const c10::OperatorHandle& op, const OpInfo& info, const KernelRecord& kernel,
            const torch::jit::Stack* stack, size_t argBase) {
  CallInputs call;
  for (const ArgRef& ref : kernel.inputs) call.add(*stack, argBase, ref);
  c10::ArrayRef<at::Tensor> inputs = call.tensors();
  // A factory's out= form has no input: the tensor it writes says where it runs.
  c10::Device device = !inputs.empty()             ? inputs.front().device()
                       : !kernel.targets.empty() && kernel.targets.front().ref.arg >= 0
                           ? argumentTensor(*stack, argBase, kernel.targets.front().ref).device()
                           : c10::Device(c10::DeviceType::PrivateUse1, currentDevice());
  for (const at::Tensor& t : inputs) {
    // The key leaves devices out (a kernel runs anywhere); one call's tensors must share one.
    TORCH_CHECK(t.device() == device, "Expected all tensors to be on the same device, but found at least two "
                "devices, ", device, " and ", t.device(), "! (", info.name, ")\n",
                errCode(SubModule::OPS, ErrCode::PARAM));
  }
  // Switching devices costs a runtime call on entry and exit: only when the inputs are elsewhere.
  c10::OptionalDeviceGuard guard;
  if (device.index() != currentDevice()) guard.reset_device(device);
  c10::Stream stream = getCurrentStream(device.index());

  // Where each result goes: a fresh tensor, or an argument the op writes (in-place self, out=, or
  // another written argument such as batch norm's running statistics).
  c10::SmallVector<at::Tensor, 4> results(kernel.outputs.size());
  c10::SmallVector<std::pair<at::Tensor, at::Tensor>, 2> copyBack;  // (temporary, target)
  for (size_t j = 0; j < kernel.outputs.size(); ++j) {
    const OutputSpec& spec = kernel.outputs[j];
    const OutputTarget& where = kernel.targets[j];
    if (where.ref.arg < 0) {
      results[j] = allocate(spec);
      continue;
    }
    at::Tensor target = argumentTensor(*stack, argBase, where.ref);
    if (where.resize) {
      // A resized out= tensor takes the result's layout, as the CPU's resize_out restrides it (only
      // when it resized: an out= of the right shape keeps its strides).
      if (at::native::resize_output(target, spec.sizes) && !spec.strides.empty()) {
        target.as_strided_(spec.sizes, spec.strides);
      }
    } else {
      // An argument written in place keeps its shape (PyTorch's message for add_ and friends).
      TORCH_CHECK(target.sizes() == c10::IntArrayRef(spec.sizes), "output with shape ", target.sizes(),
                  " doesn't match the broadcast shape ", c10::IntArrayRef(spec.sizes), "\n",
                  errCode(SubModule::OPS, ErrCode::PARAM));
    }
    TORCH_CHECK(c10::canCast(spec.dtype, target.scalar_type()), "result type ", spec.dtype,
                " can't be cast to the desired output type ", target.scalar_type(), "\n",
                errCode(SubModule::OPS, ErrCode::TYPE));
    if (info.pointwise) {
      // TensorIterator's checks, with its messages: a written tensor whose elements share memory, or
      // one that overlaps an input only in part, would give an order-dependent answer.
      at::assert_no_internal_overlap(target);
      for (const at::Tensor& in : inputs) at::assert_no_partial_overlap(target, in);
    }
    if (canWriteInto(target, spec, info, inputs)) {
      results[j] = target;
      continue;
    }
    results[j] = allocate(spec);
    copyBack.emplace_back(results[j], target);
  }

  c10::SmallVector<uint64_t, 8> params;
  for (size_t p = 0; p < kernel.params.size(); ++p) {
    params.push_back(paramSlot((*stack)[argBase + kernel.params[p].arg], kernel.paramIsFloat[p]));
  }
  if (kernel.pending) {
    launchPending(op, info, kernel, *stack, argBase, inputs, results, params, nativeStream(stream));
  } else {
    launchRecord(info, kernel, inputs, results, params, nativeStream(stream));
  }
  if (overflowCheckArmed()) checkResultsForOverflow(std::vector<at::Tensor>(results.begin(), results.end()), stream);
  // Ordered after the kernel on the same stream (no host sync); copy_ follows the target's strides,
  // format and dtype.
  for (auto& [temporary, target] : copyBack) target.copy_(temporary);

  Returns returns;
  for (const ReturnSpec& ret : kernel.returns) {
    if (ret.arg >= 0) {
      returns.push_back((*stack)[argBase + ret.arg]);  // the caller's tensor (list) itself, as on CPU
    } else if (ret.list) {
      c10::List<at::Tensor> list;
      for (int j : ret.outputs) list.push_back(results[j]);
      returns.emplace_back(std::move(list));
    } else {
      returns.emplace_back(results[ret.outputs.front()]);
    }
  }
  return returns;
}

}  // namespace

void compiledKernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const OpInfo& info = opInfo(op);
  const size_t argBase = stack->size() - info.isOut.size();
  // The thread's key buffer, taken for this call and given back at return (a call nested in a miss
  // starts a fresh one): building a key allocates nothing once the buffer has grown.
  thread_local std::string keyBuffer;
  std::string key = std::move(keyBuffer);
  key.clear();
  auto giveBack = c10::make_scope_exit([&key] { keyBuffer = std::move(key); });
  std::shared_ptr<const CacheEntry> entry;
  bool keyed = buildKey(info, *stack, argBase, key);
  if (!keyed && moveCpuIndices(info, *stack, argBase)) {
    key.clear();
    keyed = buildKey(info, *stack, argBase, key);
  }
  if (keyed) entry = resolve(info, *stack, argBase, key, /*mayDefer=*/true);
  if (!entry || entry->kind != CacheEntry::Kind::Kernel) {
    ++info.stats.fallback;
    const std::string& reason = entry ? entry->reason : nonCompilableArgument();
    info.stats.noteFallbackReason(reason);
    cpuFallback(op, stack, reason);
    return;
  }
  ++info.stats.compiled;
  Returns returns = run(op, info, *entry->kernel, stack, argBase);
  torch::jit::drop(*stack, info.isOut.size());
  for (c10::IValue& v : returns) stack->push_back(std::move(v));
}

at::Tensor callFunctional(const c10::OperatorHandle& op, torch::jit::Stack& stack) {
  // Until the borrows are released, nothing may destroy an argument IValue: the key, the lookup, a
  // miss and run() only read the stack; a fallback, which consumes it, gets owned copies first.
  bool borrowed = true;
  auto release = c10::make_scope_exit([&] {
    if (!borrowed) return;
    for (c10::IValue& v : stack) {
      if (v.isTensor()) c10::MaybeOwnedTraits<c10::IValue>::destroyBorrow(v);
    }
  });
  const OpInfo& info = opInfo(op);
  thread_local std::string keyBuffer;  // as compiledKernel's
  std::string key = std::move(keyBuffer);
  key.clear();
  auto giveBack = c10::make_scope_exit([&key] { keyBuffer = std::move(key); });
  std::shared_ptr<const CacheEntry> entry;
  if (buildKey(info, stack, 0, key)) entry = resolve(info, stack, 0, key, /*mayDefer=*/true);
  if (entry && entry->kind == CacheEntry::Kind::Kernel) {
    ++info.stats.compiled;
    Returns returns = run(op, info, *entry->kernel, &stack, 0);
    return std::move(returns.front()).toTensor();
  }
  for (c10::IValue& v : stack) {
    if (!v.isTensor()) continue;
    at::Tensor owned = v.toTensor();
    c10::MaybeOwnedTraits<c10::IValue>::destroyBorrow(v);
    v = std::move(owned);
  }
  borrowed = false;
  ++info.stats.fallback;
  const std::string& reason = entry ? entry->reason : nonCompilableArgument();
  info.stats.noteFallbackReason(reason);
  cpuFallback(op, &stack, reason);
  return std::move(stack.back()).toTensor();
}

void viewKernel(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  ++opInfo(op).stats.view;
  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
}

}  // namespace torch_npu::eager
