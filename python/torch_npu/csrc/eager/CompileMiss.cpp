#include "torch_npu/csrc/eager/CompileMiss.h"

#include <c10/util/Exception.h>
#include <dlfcn.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/jit/python/pybind_utils.h>

#include <chrono>
#include <mutex>
#include <unordered_map>

#include "torch_npu/csrc/NpuError.h"
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

// An EagerAnswer (npu_mlir.tools.compile_protocol): its record's launch list and its Dispatch plan.
std::shared_ptr<const CacheEntry> recordFrom(const py::handle& answer) {
  auto record = std::make_shared<KernelRecord>();
  readLaunchList(answer.attr("record"), *record);
  py::object dispatch = answer.attr("dispatch");
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
  auto entry = std::make_shared<CacheEntry>();
  entry->kind = CacheEntry::Kind::Kernel;
  entry->kernel = std::move(record);
  return entry;
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

MissResult compileMiss(const OpInfo& info, const torch::jit::Stack& stack, size_t argBase, const std::string& key) {
  auto start = std::chrono::steady_clock::now();
  MissResult out;
  {
    py::gil_scoped_acquire gil;
    // An EagerAnswer or an Unsupported (npu_mlir.tools.compile_protocol).
    py::object answer;
    std::string failure;
    try {
      py::object compile = py::module_::import("torch_npu.eager.miss").attr("compile_for_dispatch");
      answer = compile(py::bytes(key), info.name, describeArgs(info, stack, argBase));
    } catch (py::error_already_set& e) {
      // A bug in the miss path must not take the op away from the user: say so, run it on the CPU.
      failure = std::string("the eager compile of ") + info.name + " raised " + e.what() + "\n" +
                errCode(SubModule::OPS, ErrCode::INTERNAL);
    }
    if (!failure.empty()) {
      TORCH_WARN(failure);
      out.entry = unsupported(std::move(failure));
    } else if (!py::hasattr(answer, "record")) {
      std::string reason = answer.attr("reason").cast<std::string>();
      // A crash is news (the standard fallback warning only says "not supported"): say what happened.
      if (answer.attr("crashed").cast<bool>()) TORCH_WARN(reason);
      out.entry = unsupported(std::move(reason));
      // A refusal can hang on the call's numbers (arange with step 0): keyed by them, it does not
      // refuse the op's other calls.
      out.bakedArgs = answer.attr("baked").cast<std::vector<int>>();
    } else {
      try {
        out.entry = recordFrom(answer);
        std::string reason = answer.attr("record").attr("reason").cast<std::string>();
        if (!reason.empty()) info.stats.noteLinalgReason(reason);
        out.bakedArgs = answer.attr("dispatch").attr("baked").cast<std::vector<int>>();
      } catch (const c10::Error& e) {
        TORCH_WARN(e.what_without_backtrace());
        out.entry = unsupported(e.what_without_backtrace());
      }
    }
  }
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);
  info.stats.compileMicros += micros.count();
  return out;
}

}  // namespace torch_npu::eager
