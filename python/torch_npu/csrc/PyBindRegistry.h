// Each component adds its Python bindings from the file that defines it:
//
//   TORCH_NPU_BINDINGS(bindStreams) { m.def("_stream_query", ...); }
//
// Module.cpp only runs every registered binder; it never lists components.
#pragma once

#include <pybind11/pybind11.h>

namespace torch_npu {

using Binder = void (*)(pybind11::module_&);

struct BinderRegistration {
  BinderRegistration(const char* name, Binder binder);
};

// Runs every registered binder on the extension module.
void bindAll(pybind11::module_& m);

}  // namespace torch_npu

#define TORCH_NPU_BINDINGS(name)                                                  \
  static void name(pybind11::module_& m);                                         \
  static const ::torch_npu::BinderRegistration name##_registration(#name, name); \
  static void name(pybind11::module_& m)
