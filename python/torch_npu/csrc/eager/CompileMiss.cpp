#include "torch_npu/csrc/eager/CompileMiss.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/Exception.h>
#include <dlfcn.h>
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/jit/python/pybind_utils.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "npurt/acl_mdl.h"
#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/aten/CpuAlias.h"
#include "torch_npu/csrc/aten/CpuFallback.h"
#include "torch_npu/csrc/core/NpuFormat.h"

namespace py = pybind11;

namespace torch_npu::eager {
namespace {

py::object describeTensor(const at::Tensor& t) {
  if (!t.defined()) return py::none();
  std::string dtype = c10::toString(t.scalar_type());
  if (t.device().is_cpu()) {
    c10::IValue value = t.item();
    return py::make_tuple("S", dtype, t.unsafeGetTensorImpl()->is_wrapped_number(), torch::jit::toPyObject(value));
  }
  return py::make_tuple("T", dtype, py::cast(t.sizes().vec()), py::cast(t.strides().vec()),
                        static_cast<int64_t>(npuFormatOf(t)));
}

// Arguments as Python sees them; tensors by description only (the compile never reads data).
py::list describeArgs(const OpInfo& info, const torch::jit::Stack& stack, size_t argBase) {
  py::list args;
  for (size_t i = 0; i < info.isOut.size(); ++i) {
    if (info.isOut[i]) continue;
    const c10::IValue& v = stack[argBase + i];
    if (v.isTensor()) {
      args.append(describeTensor(v.toTensor()));
    } else if (v.isTensorList() || v.isOptionalTensorList()) {
      py::list items;
      if (v.isTensorList()) {
        for (const at::Tensor& t : v.toTensorList()) items.append(describeTensor(t));
      } else {
        for (const std::optional<at::Tensor>& t : v.toOptionalTensorList()) {
          items.append(describeTensor(t.value_or(at::Tensor())));
        }
      }
      args.append(items);
    } else {
      args.append(torch::jit::toPyObject(v));
    }
  }
  return args;
}

std::vector<ArgRef> argRefs(const py::handle& list) {
  std::vector<ArgRef> refs;
  for (const py::handle& item : list) {
    auto pair = item.cast<std::pair<int, int>>();
    refs.push_back({pair.first, pair.second});
  }
  return refs;
}

// How the call feeds `record` and places its results: a Dispatch (npu_mlir.tools.compile_protocol).
void readDispatch(const py::handle& dispatch, KernelRecord* record) {
  record->inputs = argRefs(dispatch.attr("inputs"));
  for (const py::handle& item : dispatch.attr("params")) {
    auto pair = item.cast<std::pair<int, bool>>();
    record->params.push_back({pair.first, -1});
    record->paramIsFloat.push_back(pair.second);
  }
  // A result the kernel writes in another memory order is allocated with these strides.
  py::tuple layouts = dispatch.attr("layouts");
  for (size_t j = 0; j < layouts.size() && j < record->outputs.size(); ++j) {
    if (layouts[j].is_none()) continue;
    auto [sizes, strides] = layouts[j].cast<std::pair<std::vector<int64_t>, std::vector<int64_t>>>();
    record->outputs[j].sizes = std::move(sizes);
    record->outputs[j].strides = std::move(strides);
  }
  for (const py::handle& item : dispatch.attr("targets")) {
    auto [arg, element, resize] = item.cast<std::tuple<int, int, bool>>();
    record->targets.push_back({{arg, element}, resize});
  }
  for (const py::handle& item : dispatch.attr("returns")) {
    auto [arg, outputs, list] = item.cast<std::tuple<int, std::vector<int>, bool>>();
    record->returns.push_back({arg, std::move(outputs), list});
  }
  TORCH_CHECK(record->targets.size() == record->outputs.size(), "the eager plan routes ", record->targets.size(),
              " results, the kernel has ", record->outputs.size(), "\n", errCode(SubModule::OPS, ErrCode::INTERNAL));
}

std::shared_ptr<const CacheEntry> kernelEntry(std::shared_ptr<KernelRecord> record) {
  auto entry = std::make_shared<CacheEntry>();
  entry->kind = CacheEntry::Kind::Kernel;
  entry->kernel = std::move(record);
  return entry;
}

// An EagerAnswer (npu_mlir.tools.compile_protocol): its record's launch list and its Dispatch plan.
std::shared_ptr<const CacheEntry> recordFrom(const py::handle& answer) {
  auto record = std::make_shared<KernelRecord>();
  readLaunchList(answer.attr("record"), *record);
  readDispatch(answer.attr("dispatch"), record.get());
  return kernelEntry(std::move(record));
}

// A PendingAnswer: the Dispatch plan and the results' (sizes, MLIR element type) off the meta tensors.
std::shared_ptr<KernelRecord> plannedRecord(const py::handle& answer) {
  auto record = std::make_shared<KernelRecord>();
  for (const py::handle& item : answer.attr("outputs")) {
    auto [sizes, dtype] = item.cast<std::pair<std::vector<int64_t>, std::string>>();
    record->outputs.push_back({std::move(sizes), dtypeFromMlir(dtype), {}});
  }
  readDispatch(answer.attr("dispatch"), record.get());
  return record;
}

std::shared_ptr<const CacheEntry> unsupported(std::string reason) {
  auto entry = std::make_shared<CacheEntry>();
  entry->kind = CacheEntry::Kind::Unsupported;
  entry->reason = std::move(reason);
  return entry;
}

}  // namespace

void readLaunchList(const py::handle& record, KernelRecord& out) {
  static const std::unordered_map<std::string, LaunchArg::Kind> kinds = {
      {"in", LaunchArg::Kind::Input}, {"out", LaunchArg::Kind::Output},
      {"tmp", LaunchArg::Kind::Temp}, {"param", LaunchArg::Kind::Param}};
  for (const py::handle& item : record.attr("launches")) {
    Launch launch;
    launch.symbol = item.attr("symbol").cast<std::string>();
    launch.fn = loadKernel(item.attr("so_path").cast<std::string>(), launch.symbol);
    launch.blockDim = item.attr("block_dim").cast<uint32_t>();
    for (const py::handle& ref : item.attr("refs")) {
      auto [kind, index] = ref.cast<std::pair<std::string, int>>();
      auto it = kinds.find(kind);
      TORCH_CHECK(it != kinds.end(), "a compiled launch reads a buffer of kind ", kind, "\n",
                  errCode(SubModule::OPS, ErrCode::INTERNAL));
      launch.args.push_back({it->second, index});
    }
    out.launches.push_back(std::move(launch));
  }
  out.tempBytes = record.attr("temps").cast<std::vector<int64_t>>();
  out.pipeline = record.attr("path").cast<std::string>() == "pipeline";
  for (const py::handle& item : record.attr("outputs")) {
    auto [sizes, dtype] = item.cast<std::pair<std::vector<int64_t>, std::string>>();
    out.outputs.push_back({std::move(sizes), dtypeFromMlir(dtype), {}});
  }
}

c10::ScalarType dtypeFromMlir(const std::string& name) {
  static const std::unordered_map<std::string, c10::ScalarType> types = {
      {"f32", at::kFloat}, {"f16", at::kHalf},  {"bf16", at::kBFloat16}, {"f64", at::kDouble}, {"i64", at::kLong},
      {"i32", at::kInt},   {"i16", at::kShort}, {"i8", at::kChar},       {"i1", at::kBool}};
  auto it = types.find(name);
  TORCH_CHECK(it != types.end(), "compiled kernel has an output of element type ", name,
              ", which has no torch dtype\n", errCode(SubModule::OPS, ErrCode::TYPE));
  return it->second;
}

aclrtKernelFunc loadKernel(const std::string& path, const std::string& symbol) {
  // Libraries stay loaded for the life of the process: cached records point into them.
  static std::mutex mutex;
  static std::unordered_map<std::string, void*> handles;
  std::lock_guard<std::mutex> lock(mutex);
  void*& handle = handles[path];
  if (handle == nullptr) handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  TORCH_CHECK(handle != nullptr, "cannot load compiled kernel ", path, ": ", dlerror(),
              "\nDelete the file (or the kernel cache directory) to rebuild it.\n",
              errCode(SubModule::OPS, ErrCode::NOT_FOUND));
  void* fn = dlsym(handle, symbol.c_str());
  TORCH_CHECK(fn != nullptr, "compiled kernel ", path, " has no symbol ", symbol,
              "\nDelete the file (or the kernel cache directory) to rebuild it.\n",
              errCode(SubModule::OPS, ErrCode::NOT_FOUND));
  return reinterpret_cast<aclrtKernelFunc>(fn);
}

namespace {

// The entry of an EagerAnswer or an Unsupported (npu_mlir.tools.compile_protocol). Needs the GIL.
MissResult answerEntry(const OpInfo& info, const py::handle& answer) {
  MissResult out;
  if (!py::hasattr(answer, "record")) {
    std::string reason = answer.attr("reason").cast<std::string>();
    // A crash is news (the standard fallback warning only says "not supported"): say what happened.
    if (answer.attr("crashed").cast<bool>()) TORCH_WARN(reason);
    out.entry = unsupported(std::move(reason));
    // A refusal can hang on the call's numbers (arange with step 0): keyed by them, it does not
    // refuse the op's other calls.
    out.bakedArgs = answer.attr("baked").cast<std::vector<int>>();
    return out;
  }
  try {
    out.entry = recordFrom(answer);
    std::string reason = answer.attr("record").attr("reason").cast<std::string>();
    if (!reason.empty()) info.stats.noteLinalgReason(reason);
    out.bakedArgs = answer.attr("dispatch").attr("baked").cast<std::vector<int>>();
  } catch (const c10::Error& e) {
    TORCH_WARN(e.what_without_backtrace());
    out.entry = unsupported(e.what_without_backtrace());
  }
  return out;
}

// A pending record's results must be the built kernel's: else its waiting calls run on the CPU.
bool sameResults(const KernelRecord& planned, const KernelRecord& built) {
  if (planned.outputs.size() != built.outputs.size()) return false;
  for (size_t j = 0; j < planned.outputs.size(); ++j) {
    if (planned.outputs[j].sizes != built.outputs[j].sizes || planned.outputs[j].dtype != built.outputs[j].dtype ||
        planned.outputs[j].strides != built.outputs[j].strides) {
      return false;
    }
  }
  return true;
}

void storeFinished(PendingCompile& pending) { eager::store(pending.storeKey, pending.entry); }

// Called by torch_npu.eager.miss from its build thread (with the GIL) when the build ends.
void finishPending(const std::shared_ptr<PendingCompile>& pending, const OpInfo* info,
                   std::chrono::steady_clock::time_point start, const py::object& answer) {
  std::shared_ptr<const CacheEntry> entry;
  try {
    // Its warnings (a worker crash) are Python warnings of the build thread, as on the host they were.
    torch::PyWarningHandler warnings;
    entry = answerEntry(*info, answer).entry;
  } catch (const std::exception& e) {
    entry = unsupported(std::string("the eager compile of ") + info->name + " answered " + e.what() + "\n" +
                        errCode(SubModule::OPS, ErrCode::INTERNAL));
  }
  bool publish = false;
  {
    std::lock_guard<std::mutex> lock(pending->mutex);
    pending->entry = std::move(entry);
    pending->done = true;
    publish = pending->stored;
  }
  pending->finished.notify_all();
  if (publish) storeFinished(*pending);
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
  info->stats.compileMicros += micros.count();
}

// One queued call of a pending record: what the stand-in launch needs when it runs on the stream.
// CPU aliases are taken when the call is queued, so later metadata changes (a resize_, a transpose_)
// do not reach it; the NPU tensors are held so their memory stays allocated.
struct PendingCall {
  std::shared_ptr<PendingCompile> pending;
  const OpInfo* info = nullptr;
  c10::OperatorHandle op;
  std::vector<c10::IValue> args;  // the call's arguments, NPU tensors replaced by CPU aliases
  std::vector<at::Tensor> held;   // every NPU tensor of the call
  std::vector<uint64_t> inputs, results, params;  // launch slots (data pointers, parameter bits)
  std::vector<at::Tensor> resultAliases;
  std::vector<at::Tensor> targetAliases;  // per result: the argument it is written into, else undefined

  explicit PendingCall(const c10::OperatorHandle& handle) : op(handle) {}
};

bool isNpuTensor(const at::Tensor& t) { return t.defined() && t.device().type() == c10::DeviceType::PrivateUse1; }

c10::IValue aliasArgument(const c10::IValue& v, std::vector<at::Tensor>& held) {
  auto alias = [&held](const at::Tensor& t) {
    if (!isNpuTensor(t)) return t;
    held.push_back(t);
    return cpuAlias(t);
  };
  if (v.isTensor()) return alias(v.toTensor());
  if (v.isTensorList()) {
    c10::List<at::Tensor> list;
    for (const at::Tensor& t : v.toTensorList()) list.push_back(alias(t));
    return list;
  }
  if (v.isOptionalTensorList()) {
    c10::List<std::optional<at::Tensor>> list;
    for (const std::optional<at::Tensor>& t : v.toOptionalTensorList()) {
      list.push_back(t.has_value() ? std::optional<at::Tensor>(alias(*t)) : std::nullopt);
    }
    return list;
  }
  if (v.isDevice() && v.toDevice().type() == c10::DeviceType::PrivateUse1) return c10::Device(c10::DeviceType::CPU);
  return v;
}

// The build failed: the op's CPU kernel on the call's aliases, its fresh results copied into the ones
// the dispatcher allocated (arguments it writes are written through their aliases).
void runOnCpu(PendingCall& call, const std::string& reason) {
  const c10::FunctionSchema& schema = call.op.schema();
  torch::jit::Stack stack(call.args.begin(), call.args.end());
  call.op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), &stack);
  countFallbackCall(call.info->name, reason);
  const KernelRecord& record = *call.pending->planned;
  const size_t retBase = stack.size() - schema.returns().size();
  for (size_t r = 0; r < record.returns.size() && retBase + r < stack.size(); ++r) {
    const ReturnSpec& ret = record.returns[r];
    if (ret.arg >= 0) continue;  // an argument written in place through its alias
    const c10::IValue& value = stack[retBase + r];
    std::vector<at::Tensor> produced = value.isTensorList() ? value.toTensorVector() : std::vector<at::Tensor>{value.toTensor()};
    TORCH_CHECK(produced.size() == ret.outputs.size(), call.info->name, " returned ", produced.size(),
                " tensors on the CPU, its plan ", ret.outputs.size(), "\n", errCode(SubModule::OPS, ErrCode::INTERNAL));
    for (size_t k = 0; k < produced.size(); ++k) {
      at::Tensor& into = call.resultAliases[ret.outputs[k]];
      TORCH_CHECK(produced[k].sizes() == into.sizes(), call.info->name, " gave a result of shape ", produced[k].sizes(),
                  " on the CPU where its meta function gave ", into.sizes(), "\n",
                  errCode(SubModule::OPS, ErrCode::INTERNAL));
      into.copy_(produced[k]);
    }
  }
  // A result written into an argument through a temporary (copied back after this launch): the
  // argument holds the value now, and the copy back must not overwrite it.
  for (size_t j = 0; j < call.targetAliases.size(); ++j) {
    const at::Tensor& target = call.targetAliases[j];
    if (target.defined() && call.resultAliases[j].data_ptr() != target.data_ptr()) call.resultAliases[j].copy_(target);
  }
}

int32_t runLaunches(const KernelRecord& kernel, const PendingCall& call) {
  std::vector<std::unique_ptr<void, decltype(&std::free)>> temps;
  for (int64_t bytes : kernel.tempBytes) {
    // Host memory is device memory here; the stream worker does not go through the allocator.
    temps.emplace_back(std::aligned_alloc(64, (std::max<int64_t>(bytes, 1) + 63) / 64 * 64), &std::free);
    TORCH_CHECK(temps.back() != nullptr, "out of host memory for a kernel's intermediate of ", bytes, " bytes");
  }
  std::vector<uint64_t> slots;
  for (const Launch& launch : kernel.launches) {
    slots.clear();
    for (const LaunchArg& arg : launch.args) {
      switch (arg.kind) {
        case LaunchArg::Kind::Input: slots.push_back(call.inputs[arg.index]); break;
        case LaunchArg::Kind::Output: slots.push_back(call.results[arg.index]); break;
        case LaunchArg::Kind::Temp: slots.push_back(reinterpret_cast<uint64_t>(temps[arg.index].get())); break;
        case LaunchArg::Kind::Param: slots.push_back(call.params[arg.index]); break;
      }
    }
    // The blocks one after the other on this stream's worker: the stand-in was launched as one block
    // (its kernels' block counts were not known yet); later calls launch them over the AI cores.
    for (uint32_t b = 0; b < launch.blockDim; ++b) {
      if (int32_t rc = launch.fn(slots.data(), b, launch.blockDim)) return rc;
    }
  }
  return 0;
}

// The code a stand-in launch fails with when the op's CPU kernel raised (its message is printed).
constexpr int32_t kCpuFallbackFailed = 2;

// The stand-in launch (one block, on the stream's worker): waits for the build, then runs the call.
int32_t runPendingCall(const void* args, uint32_t, uint32_t) {
  std::unique_ptr<PendingCall> call(*static_cast<PendingCall* const*>(args));
  std::shared_ptr<const CacheEntry> entry;
  {
    std::unique_lock<std::mutex> lock(call->pending->mutex);
    call->pending->finished.wait(lock, [&] { return call->pending->done; });
    entry = call->pending->entry;
  }
  if (entry->kind == CacheEntry::Kind::Kernel && sameResults(*call->pending->planned, *entry->kernel)) {
    if (entry->kernel->pipeline) ++call->info->stats.pipeline;
    return runLaunches(*entry->kernel, *call);
  }
  --call->info->stats.compiled;
  ++call->info->stats.fallback;
  std::string reason = entry->kind == CacheEntry::Kind::Kernel
                           ? "its kernel's results differ from the meta function's"
                           : entry->reason;
  call->info->stats.noteFallbackReason(reason);
  try {
    runOnCpu(*call, reason);
  } catch (const std::exception& e) {
    // Raised on the host, this would have been the op's error; on the stream it is the launch's.
    std::fprintf(stderr, "torch_npu: %s, queued before its kernel was built, failed on the CPU: %s\n",
                 call->info->name.c_str(), e.what());
    return kCpuFallbackFailed;
  }
  return 0;
}

const std::string& pendingLabel(const OpInfo& info) {
  static std::mutex mutex;
  static std::unordered_map<const OpInfo*, std::string> labels;
  std::lock_guard<std::mutex> lock(mutex);
  std::string& label = labels[&info];
  if (label.empty()) label = info.name + " (first call, kernel built meanwhile)";
  return label;
}

// Opt-in: with misses queued, a host read of a count behind a pending build (x[m.any()]'s nonzero)
// hung, and a failed build's CPU error surfaces at the next synchronization, not at the call. Read on
// every miss (a miss costs milliseconds), so a test or a user can switch it within a process.
bool asyncMissesEnabled() {
  const char* value = std::getenv("TORCH_NPU_ASYNC_MISSES");
  const char* noFallback = std::getenv("TORCH_NPU_FALLBACK_CPU_DISABLE");
  // Without the CPU fallback a failed build raises: on the host, where the call is.
  return value != nullptr && std::string(value) == "1" && !(noFallback != nullptr && std::string(noFallback) == "1");
}

}  // namespace

bool deferrable(const OpInfo& info, const torch::jit::Stack& stack, size_t argBase) {
  if (!asyncMissesEnabled() || PyGILState_Check()) return false;
  auto plain = [](const at::Tensor& t) { return !isNpuTensor(t) || internalDesc(t) == nullptr; };
  for (size_t i = 0; i < info.isOut.size(); ++i) {
    const c10::IValue& v = stack[argBase + i];
    if (v.isTensor() && !plain(v.toTensor())) return false;
    if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorList()) {
        if (!plain(t)) return false;
      }
    }
    if (v.isOptionalTensorList()) {
      for (const std::optional<at::Tensor>& t : v.toOptionalTensorList()) {
        if (t.has_value() && !plain(*t)) return false;
      }
    }
  }
  return true;
}

void pendingStored(const CacheEntry& entry) {
  PendingCompile& pending = *entry.kernel->pending;
  bool publish = false;
  {
    std::lock_guard<std::mutex> lock(pending.mutex);
    pending.stored = true;
    publish = pending.done;
  }
  if (publish) storeFinished(pending);
}

std::shared_ptr<const CacheEntry> awaitCompile(PendingCompile& pending) {
  std::optional<py::gil_scoped_release> noGil;
  if (PyGILState_Check()) noGil.emplace();  // the build thread needs it to finish
  std::unique_lock<std::mutex> lock(pending.mutex);
  pending.finished.wait(lock, [&] { return pending.done; });
  return pending.entry;
}

void launchPending(const c10::OperatorHandle& op, const OpInfo& info, const KernelRecord& record,
                   const torch::jit::Stack& stack, size_t argBase, c10::ArrayRef<at::Tensor> inputs,
                   c10::ArrayRef<at::Tensor> results, c10::ArrayRef<uint64_t> params, aclrtStream stream) {
  aclmdlRICaptureStatus status = ACL_MODEL_RI_CAPTURE_STATUS_NONE;
  NPU_CHECK_ACL(aclmdlRICaptureGetInfo(stream, &status, nullptr));
  if (status != ACL_MODEL_RI_CAPTURE_STATUS_NONE) {
    // A captured launch replays: it must be the kernel itself.
    std::shared_ptr<const CacheEntry> built = awaitCompile(*record.pending);
    TORCH_CHECK(built->kind == CacheEntry::Kind::Kernel && sameResults(record, *built->kernel), info.name,
                " cannot be captured: its kernel did not compile (", built->reason,
                "). Run the op once before capturing, or capture it without this op.\n",
                errCode(SubModule::GRAPH, ErrCode::NOT_SUPPORT));
    launchRecord(info, *built->kernel, inputs, results, params, stream);
    return;
  }
  auto call = std::make_unique<PendingCall>(op);
  call->pending = record.pending;
  call->info = &info;
  for (size_t i = 0; i < op.schema().arguments().size(); ++i) {
    call->args.push_back(aliasArgument(stack[argBase + i], call->held));
  }
  for (const at::Tensor& t : inputs) call->inputs.push_back(reinterpret_cast<uint64_t>(t.const_data_ptr()));
  for (size_t j = 0; j < results.size(); ++j) {
    call->held.push_back(results[j]);
    call->results.push_back(reinterpret_cast<uint64_t>(results[j].data_ptr()));
    call->resultAliases.push_back(cpuAlias(results[j]));
    const OutputTarget& where = record.targets[j];
    at::Tensor target;
    if (where.ref.arg >= 0) {
      const c10::IValue& arg = call->args[where.ref.arg];
      target = where.ref.element < 0 ? arg.toTensor()
               : arg.isTensorList()  ? arg.toTensorList().get(where.ref.element)
                                     : arg.toOptionalTensorList().get(where.ref.element).value();
    }
    call->targetAliases.push_back(target);
  }
  call->params.assign(params.begin(), params.end());
  PendingCall* raw = call.get();
  NPU_CHECK_ACL(aclrtLaunchKernel(&runPendingCall, 1, &raw, sizeof(raw), pendingLabel(info).c_str(), stream));
  call.release();  // the stand-in owns it now
}

MissResult compileMiss(const OpInfo& info, const torch::jit::Stack& stack, size_t argBase, const std::string& key,
                       bool defer) {
  auto start = std::chrono::steady_clock::now();
  MissResult out;
  {
    py::gil_scoped_acquire gil;
    // An EagerAnswer, an Unsupported or (with `done`) a PendingAnswer (npu_mlir.tools.compile_protocol).
    py::object answer;
    std::string failure;
    std::shared_ptr<PendingCompile> pending;
    try {
      py::object compile = py::module_::import("torch_npu.eager.miss").attr("compile_for_dispatch");
      py::object done = py::none();
      if (defer) {
        pending = std::make_shared<PendingCompile>();
        const OpInfo* op = &info;
        done = py::cpp_function([pending, op, start](const py::object& built) { finishPending(pending, op, start, built); });
      }
      answer = compile(py::bytes(key), info.name, describeArgs(info, stack, argBase), done);
    } catch (py::error_already_set& e) {
      // A bug in the miss path must not take the op away from the user: say so, run it on the CPU.
      failure = std::string("the eager compile of ") + info.name + " raised " + e.what() + "\n" +
                errCode(SubModule::OPS, ErrCode::INTERNAL);
    }
    if (!failure.empty()) {
      TORCH_WARN(failure);
      out.entry = unsupported(std::move(failure));
    } else if (py::hasattr(answer, "outputs") && !py::hasattr(answer, "record")) {
      try {
        std::shared_ptr<KernelRecord> record = plannedRecord(answer);
        out.bakedArgs = answer.attr("dispatch").attr("baked").cast<std::vector<int>>();
        pending->storeKey = key;
        if (!out.bakedArgs.empty()) appendBakedValues(stack, argBase, out.bakedArgs, pending->storeKey);
        pending->planned = std::make_shared<const KernelRecord>(*record);
        record->pending = pending;
        out.entry = kernelEntry(std::move(record));
        return out;  // its compile time is counted when the build ends
      } catch (const c10::Error& e) {
        TORCH_WARN(e.what_without_backtrace());
        out.entry = unsupported(e.what_without_backtrace());
      }
    } else {
      out = answerEntry(info, answer);
    }
  }
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
  info.stats.compileMicros += micros.count();
  return out;
}

}  // namespace torch_npu::eager
