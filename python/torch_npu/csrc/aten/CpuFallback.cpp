#include "torch_npu/csrc/aten/CpuFallback.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/aten/ArgumentErrors.h"
#include "torch_npu/csrc/aten/CpuAlias.h"
#include "torch_npu/csrc/core/NpuDevice.h"
#include "torch_npu/csrc/core/NpuFormat.h"
#include "torch_npu/csrc/core/NpuStream.h"
#include "torch_npu/csrc/npu/OverflowCheck.h"

namespace torch_npu {
namespace {

std::mutex countsMutex;
std::map<std::string, int64_t> counts;

bool isNpu(const at::Tensor& t) { return t.defined() && t.device().type() == c10::DeviceType::PrivateUse1; }

bool fallbackDisabled() {
  const char* value = std::getenv("TORCH_NPU_FALLBACK_CPU_DISABLE");
  return value != nullptr && std::string(value) == "1";
}

void countAndWarnOnce(const std::string& op, const std::string& reason) {
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(countsMutex);
    static std::set<std::string> warned;
    first = warned.insert(op).second;
    ++counts[op];
  }
  if (!first) return;
  if (reason.empty()) {
    TORCH_WARN(op, " is not currently supported on the NPU backend and will fall back to run on the CPU");
  } else {
    TORCH_WARN(op, " falls back to run on the CPU: the npu compiler rejected this call (", reason,
               "). torch_npu.npu.eager_stats() shows the reason per op.");
  }
}

// Each NPU tensor of the call with the CPU alias that replaced it on the stack. A tensor
// stored in an internal format is never aliased as if it were ND: the alias covers a
// base-format copy (`memory`), converted back into the tensor if the op writes it.
struct Aliased {
  at::Tensor npu;
  at::Tensor cpu;
  at::Tensor memory;  // the NPU tensor whose bytes `cpu` aliases
  bool converted = false;
  bool written = false;
};

class FallbackCall {
 public:
  at::Tensor toCpu(const at::Tensor& t, bool written) {
    if (!isNpu(t)) return t;
    if (!device_.has_value()) device_ = t.device();
    devices_.insert(t.device().index());
    bool converted = internalDesc(t) != nullptr && !isWholeStorageBytes(t);
    at::Tensor memory = converted ? toBaseFormat(t) : t;
    aliased_.push_back({t, cpuAlias(memory), memory, converted, written});
    return aliased_.back().cpu;
  }

  c10::IValue argToCpu(const c10::IValue& value, bool written) {
    if (value.isTensor()) return toCpu(value.toTensor(), written);
    if (value.isTensorList()) {
      c10::List<at::Tensor> list = value.toTensorList();
      c10::List<at::Tensor> converted;
      for (const at::Tensor& t : list) converted.push_back(toCpu(t, written));
      return converted;
    }
    if (value.isOptionalTensorList()) {
      c10::List<std::optional<at::Tensor>> converted;
      for (const std::optional<at::Tensor>& t : value.toOptionalTensorList()) {
        converted.push_back(t.has_value() ? std::optional<at::Tensor>(toCpu(*t, written)) : std::nullopt);
      }
      return converted;
    }
    if (value.isDevice() && value.toDevice().type() == c10::DeviceType::PrivateUse1) {
      if (!device_.has_value()) device_ = value.toDevice();
      return c10::Device(c10::DeviceType::CPU);
    }
    return value;
  }

  // Kernels run on the host now: everything queued on the NPU streams involved must be done.
  void drainStreams() const {
    for (c10::DeviceIndex d : devices_) synchronizeStream(getCurrentStream(d));
  }

  // An out= or in-place argument whose CPU kernel had to grow it got CPU memory:
  // move the result into the NPU tensor.
  void writeBackResized() const {
    for (const Aliased& a : aliased_) {
      if (a.converted) {
        if (a.written) writeBackConverted(a);
        continue;
      }
      bool moved = a.cpu.storage().data() != a.npu.storage().data();
      if (!moved && a.cpu.sizes() == a.npu.sizes() && a.cpu.strides() == a.npu.strides() &&
          a.cpu.storage_offset() == a.npu.storage_offset()) {
        continue;
      }
      if (moved) {
        a.npu.resize_(a.cpu.sizes());
        a.npu.copy_(a.cpu);
      } else {
        a.npu.unsafeGetTensorImpl()->set_sizes_and_strides(a.cpu.sizes(), a.cpu.strides(), a.cpu.storage_offset());
      }
    }
  }

  // The op wrote the base-format copy of an internal-format tensor: convert it back.
  static void writeBackConverted(const Aliased& a) {
    bool moved = a.cpu.storage().data() != a.memory.storage().data();
    TORCH_CHECK(!moved && a.cpu.sizes() == a.npu.sizes(), "the CPU fallback resized an output stored in internal ",
                "format ", static_cast<int64_t>(npuFormatOf(a.npu)), "; call torch_npu.npu_format_cast_(t, 2) on it ",
                "before this op\n", errCode(SubModule::OPS, ErrCode::NOT_SUPPORT));
    writeFormatted(a.npu, a.memory);
  }

  at::Tensor resultToNpu(const at::Tensor& result) {
    if (!result.defined() || !result.device().is_cpu()) return result;
    for (const Aliased& a : aliased_) {
      if (result.is_same(a.cpu)) return a.npu;
    }
    for (const Aliased& a : aliased_) {
      if (result.storage().data() == a.memory.storage().data() && result.storage().data() != nullptr) {
        // A view the CPU kernel made of an input: the same view of the NPU memory.
        return a.memory.as_strided(result.sizes(), result.strides(), result.storage_offset());
      }
    }
    c10::Device device = device_.value_or(c10::Device(c10::DeviceType::PrivateUse1, currentDevice()));
    c10::DeviceGuard guard(device);
    at::Tensor out = result.is_non_overlapping_and_dense()
                         ? at::empty_strided(result.sizes(), result.strides(), result.options().device(device))
                         : at::empty(result.sizes(), result.options().device(device));
    out.copy_(result);
    return out;
  }

  c10::IValue returnToNpu(const c10::IValue& value) {
    if (value.isTensor()) return resultToNpu(value.toTensor());
    if (value.isTensorList()) {
      c10::List<at::Tensor> converted;
      for (const at::Tensor& t : value.toTensorList()) converted.push_back(resultToNpu(t));
      return converted;
    }
    return value;
  }

 private:
  std::optional<c10::Device> device_;
  std::set<c10::DeviceIndex> devices_;
  std::vector<Aliased> aliased_;
};

// Any CPU tensor but a 0-d one (a value read on the host, as TensorIterator takes a CPU scalar) next to
// an NPU tensor is a device mismatch, except where cpuTensorArgument allows it.
bool onCpuWithElements(const at::Tensor& t) { return t.defined() && t.device().is_cpu() && t.dim() > 0; }

// torch.cuda's check of one call's devices, which a PrivateUse1 kernel must make itself: without it
// the fallback computed `npu_tensor * cpu_tensor` on the host and returned an npu result.
void checkOneDevice(const c10::FunctionSchema& schema, const std::string& name, const torch::jit::Stack& stack,
                    size_t argBase) {
  const std::string& allowed = cpuTensorArgument(schema.name());
  if (allowed == "*") return;
  std::optional<c10::Device> npu;
  const char* cpuArgument = nullptr;
  for (size_t i = 0; i < schema.arguments().size(); ++i) {
    const std::string& arg = schema.arguments()[i].name();
    bool cpuAllowed = allowed == arg;
    auto see = [&](const at::Tensor& t) {
      if (isNpu(t) && !npu.has_value()) npu = t.device();
      if (!cpuAllowed && cpuArgument == nullptr && onCpuWithElements(t)) cpuArgument = arg.c_str();
    };
    const c10::IValue& v = stack[argBase + i];
    if (v.isTensor()) see(v.toTensor());
    if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorList()) see(t);
    }
    if (v.isOptionalTensorList()) {
      for (const std::optional<at::Tensor>& t : v.toOptionalTensorList()) see(t.value_or(at::Tensor()));
    }
  }
  TORCH_CHECK(!npu.has_value() || cpuArgument == nullptr, "Expected all tensors to be on the same device, but found at ",
              "least two devices, ", *npu, " and cpu! (argument '", cpuArgument, "' of ", name, "; move it with ",
              ".to('npu'), or pass a Python number or 0-d tensor)\n", errCode(SubModule::OPS, ErrCode::PARAM));
}

void runOnCpu(const c10::OperatorHandle& op, torch::jit::Stack* stack, const std::string& reason) {
  const c10::FunctionSchema& schema = op.schema();
  std::string name = schema.name();
  if (!schema.overload_name().empty()) name += "." + schema.overload_name();
  const size_t numArgs = schema.arguments().size();
  const size_t argBase = stack->size() - numArgs;
  checkOneDevice(schema, name, *stack, argBase);
  TORCH_CHECK_NOT_IMPLEMENTED(!fallbackDisabled(), name,
                              " is not currently supported on the NPU backend, and TORCH_NPU_FALLBACK_CPU_DISABLE=1 "
                              "forbids running it on the CPU: unset that variable to allow the CPU fallback.\n",
                              errCode(SubModule::OPS, ErrCode::NOT_SUPPORT));

  FallbackCall call;
  for (size_t i = 0; i < numArgs; ++i) {
    const c10::AliasInfo* alias = schema.arguments()[i].alias_info();
    (*stack)[argBase + i] = call.argToCpu((*stack)[argBase + i], alias != nullptr && alias->isWrite());
  }
  call.drainStreams();

  try {
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
  } catch (c10::OutOfMemoryError&) {
    throw;
  } catch (c10::Error& e) {
    markArgumentError(e);  // the op's own checks refused its arguments (torch's message and type)
    throw;
  }
  // Only a call the CPU kernel accepted ran on the CPU: one its own checks refused raised above.
  countAndWarnOnce(name, reason);

  call.writeBackResized();
  const size_t numReturns = schema.returns().size();
  const size_t retBase = stack->size() - numReturns;
  for (size_t i = 0; i < numReturns; ++i) (*stack)[retBase + i] = call.returnToNpu((*stack)[retBase + i]);
  if (overflowCheckArmed()) {  // a fallback op's inf/nan sets the flag as a kernel's does
    std::vector<at::Tensor> results;
    for (size_t i = 0; i < numReturns; ++i) {
      const c10::IValue& value = (*stack)[retBase + i];
      if (value.isTensor() && isNpu(value.toTensor())) results.push_back(value.toTensor());
      if (value.isTensorList()) {
        for (const at::Tensor& t : value.toTensorVector()) {
          if (isNpu(t)) results.push_back(t);
        }
      }
    }
    if (!results.empty()) checkResultsForOverflow(results, getCurrentStream(results.front().device().index()));
  }
}

void npuCpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) { runOnCpu(op, stack, ""); }

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&npuCpuFallback>()); }

}  // namespace

const std::string& cpuTensorArgument(const std::string& schemaName) {
  // The indices of an indexing op, the lengths of a packed sequence (read on the host), either side of a copy.
  static const std::map<std::string, std::string> table = {
      {"aten::index", "indices"},          {"aten::_unsafe_index", "indices"},
      {"aten::index_put", "indices"},      {"aten::index_put_", "indices"},
      {"aten::_index_put_impl_", "indices"}, {"aten::_unsafe_index_put", "indices"},
      {"aten::_pack_padded_sequence", "lengths"},
      {"aten::copy_", "*"}, {"aten::_copy_from", "*"}, {"aten::_copy_from_and_resize", "*"},
      {"aten::_to_copy", "*"}, {"aten::to", "*"}};
  static const std::string none;
  auto it = table.find(schemaName);
  return it == table.end() ? none : it->second;
}

void cpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack, const std::string& reason) {
  runOnCpu(op, stack, reason);
}

void countFallbackCall(const std::string& op, const std::string& reason) { countAndWarnOnce(op, reason); }

std::map<std::string, int64_t> fallbackCounts() {
  std::lock_guard<std::mutex> lock(countsMutex);
  return counts;
}

void resetFallbackCounts() {
  std::lock_guard<std::mutex> lock(countsMutex);
  counts.clear();
}

}  // namespace torch_npu
