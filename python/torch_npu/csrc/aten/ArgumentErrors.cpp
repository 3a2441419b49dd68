// ERR01001 where torch's own checks refuse an npu op's arguments before our kernels run.
//
// The eager dispatcher's view kernel runs torch's shared view code (transpose, select, ...):
// the generated registrations call it through viewWithArgumentErrors.
//
// Structured ops whose functional or in-place form has no npu kernel of its own (topk,
// gather, cumsum_, exp_, ...) run torch's CompositeExplicitAutogradNonFunctional kernel: it
// calls the op's meta function (torch's argument checks), allocates the results, then
// calls the out= form, which is ours. The meta checks raise before any npu code runs, so
// their errors would carry no ERR code. At module load every such aten op gets a boxed
// npu kernel that runs that same composite kernel and marks what it raises.
//
// The composite kernel is reached through PrivateUse2's dispatch slot: no backend
// registers that key, so its slot holds the composite kernel PrivateUse1's held before.
#include "torch_npu/csrc/aten/ArgumentErrors.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <string>

#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/PyBindRegistry.h"
#include "torch_npu/csrc/eager/EagerDispatch.h"

namespace torch_npu {

void markArgumentError(c10::Error& e) {
  if (std::string(e.what_without_backtrace()).find("ERR0") == std::string::npos) {
    e.add_context(errCode(SubModule::OPS, ErrCode::PARAM));
  }
}

void viewWithArgumentErrors(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  try {
    eager::viewKernel(op, stack);
  } catch (c10::Error& e) {
    markArgumentError(e);
    throw;
  }
}

namespace {

constexpr c10::DispatchKey kCompositeSlot = c10::DispatchKey::PrivateUse2;

void compositeWithArgumentErrors(const c10::OperatorHandle& op, c10::DispatchKeySet, torch::jit::Stack* stack) {
  try {
    op.redispatchBoxed(c10::DispatchKeySet(kCompositeSlot), stack);
  } catch (c10::OutOfMemoryError&) {
    throw;
  } catch (c10::Error& e) {
    markArgumentError(e);
    throw;
  }
}

bool runsTheComposite(const c10::OperatorHandle& op) {
  return op.operator_name().name.rfind("aten::", 0) == 0 &&
         !op.hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1) &&
         !op.hasKernelForDispatchKey(kCompositeSlot) &&
         op.hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutogradNonFunctional);
}

// At module load, not static initialization: every kernel of this library is registered by then,
// so an op with an npu kernel of its own is never wrapped.
TORCH_NPU_BINDINGS(bindArgumentErrors) {
  static auto* library = new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1, __FILE__,
                                            __LINE__);  // registrations live as long as the process
  for (const c10::OperatorName& name : c10::Dispatcher::singleton().getAllOpNames()) {
    std::optional<c10::OperatorHandle> op = c10::Dispatcher::singleton().findOp(name);
    if (!op || !runsTheComposite(*op)) continue;
    std::string qualified = name.name.substr(6);  // without "aten::"
    if (!name.overload_name.empty()) qualified += "." + name.overload_name;
    library->impl(qualified.c_str(), torch::CppFunction::makeFromBoxedFunction<&compositeWithArgumentErrors>());
  }
}

}  // namespace
}  // namespace torch_npu
