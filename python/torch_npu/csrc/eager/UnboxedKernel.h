// The unboxed face of the eager dispatcher for functional ops (one Tensor returned), registered by
// the generated NpuNativeFunctions.cpp in place of the boxed compiledKernel.
//
// Why: a boxed kernel receives its arguments as IValues, copies of the caller's tensors. In torch
// 2.13 a tensor that Python holds has one reference, its PyObject's, and the copy that takes it to
// two increfs that PyObject (and the copy's release decrefs it), each time acquiring the GIL, which
// the op's Python binding had just released: two GIL round trips per Python-held input, a quarter of
// a 1-element add's time on npu (perf: pthread_mutex_lock / unlock under take_gil, from
// TensorImpl::incref_pyobject / decref_pyobject). Here the dispatcher passes references; the
// arguments are boxed with their tensors *borrowed* (no reference taken, as c10::MaybeOwned does),
// the call runs the same key / lookup / launch as compiledKernel, and the borrows are released
// without a decref. In-place and out= ops (Tensor& returns) and tuples stay boxed.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <torch/library.h>

#include <optional>
#include <type_traits>

#include "torch_npu/csrc/eager/EagerDispatch.h"

namespace torch_npu::eager {

// Runs the op on `stack`, which holds exactly its arguments with every Tensor IValue borrowed from
// the caller (released here, whatever happens); returns its result.
at::Tensor callFunctional(const c10::OperatorHandle& op, torch::jit::Stack& stack);

namespace unboxed {

template <class T>
void box(torch::jit::Stack& stack, T&& arg) {
  using Plain = std::remove_cv_t<std::remove_reference_t<T>>;
  if constexpr (std::is_same_v<Plain, at::Tensor>) {
    stack.emplace_back(c10::MaybeOwnedTraits<at::Tensor>::createBorrow(arg));
  } else if constexpr (std::is_same_v<Plain, std::optional<at::Tensor>>) {
    if (arg.has_value()) {
      stack.emplace_back(c10::MaybeOwnedTraits<at::Tensor>::createBorrow(*arg));
    } else {
      stack.emplace_back();
    }
  } else {
    stack.emplace_back(std::forward<T>(arg));  // as c10's boxArgs does
  }
}

template <class Op, class Sig>
struct Functional;

template <class Op, class... Args>
struct Functional<Op, at::Tensor(Args...)> {
  static at::Tensor call(Args... args) {
    static const c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow(Op::name, Op::overload_name);
    torch::jit::Stack stack;
    stack.reserve(sizeof...(Args));
    (box(stack, std::forward<Args>(args)), ...);
    return callFunctional(op, stack);
  }
};

template <class Sig>
constexpr bool kReturnsOneTensor = false;
template <class... Args>
constexpr bool kReturnsOneTensor<at::Tensor(Args...)> = true;

}  // namespace unboxed

// The PrivateUse1 kernel of aten op `Op` (an at::_ops struct) named `name` ("add.Tensor").
template <class Op>
void registerCompiled(torch::Library& m, const char* name) {
  using Sig = typename Op::schema;
  if constexpr (unboxed::kReturnsOneTensor<Sig>) {
    m.impl(name, c10::CompileTimeFunctionPointer<Sig, &unboxed::Functional<Op, Sig>::call>());
  } else {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&compiledKernel>());
  }
}

}  // namespace torch_npu::eager
