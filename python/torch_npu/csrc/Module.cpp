// torch_npu._C: the thin pybind face of the csrc components.
#include <utility>
#include <vector>

#include "torch_npu/csrc/PyBindRegistry.h"

namespace torch_npu {
namespace {

// A function-local static: binders register during static initialisation, in
// an order across files that C++ leaves unspecified.
std::vector<std::pair<const char*, Binder>>& binders() {
  static std::vector<std::pair<const char*, Binder>> all;
  return all;
}

}  // namespace

BinderRegistration::BinderRegistration(const char* name, Binder binder) {
  binders().emplace_back(name, binder);
}

void bindAll(pybind11::module_& m) {
  for (auto& [name, binder] : binders()) binder(m);
}

}  // namespace torch_npu

PYBIND11_MODULE(_C, m) {
  m.doc() = "torch_npu C++ extension";
  torch_npu::bindAll(m);
}
