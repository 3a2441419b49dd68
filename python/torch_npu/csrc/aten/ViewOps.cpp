// View kernels that have a CPU kernel but no composite one: without these the CPU
// fallback would return copies and writes through the view would be lost.
//
// A view of a tensor stored in an internal format cannot alias its storage (the bytes
// are not in logical order): as torch_npu does, it is a view of a base-format copy,
// with a warning that writes through it do not reach the original.
//
// A size or stride these kernels refuse is the op's argument error: it carries ERR01001, as
// the eager dispatcher's views (transpose, select, ...) do.
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <torch/library.h>

#include "torch_npu/csrc/aten/ArgumentErrors.h"
#include "torch_npu/csrc/core/NpuFormat.h"

namespace torch_npu {
namespace {

bool keepsLayout(const at::Tensor& self, at::IntArrayRef size, at::IntArrayRef stride, int64_t offset) {
  return self.sizes() == size && self.strides() == stride && self.storage_offset() == offset;
}

// self, or its base-format copy when the view would reinterpret internal-format bytes.
at::Tensor viewable(const at::Tensor& self, at::IntArrayRef size, at::IntArrayRef stride, int64_t offset) {
  if (internalDesc(self) == nullptr || isWholeStorageBytes(self) || keepsLayout(self, size, stride, offset)) {
    return self;
  }
  TORCH_WARN_ONCE("a view of a tensor stored in internal format ", static_cast<int64_t>(npuFormatOf(self)),
                  " is a view of a base-format copy: do not perform in-place operations on the returned value, "
                  "they do not reach the original. Use torch_npu.npu_format_cast(t, 2) first, or keep "
                  "torch.npu.config.allow_internal_format = False.");
  return toBaseFormat(self);
}

at::Tensor asStrided(const at::Tensor& self, at::IntArrayRef size, at::IntArrayRef stride,
                     std::optional<int64_t> offset) {
  return at::native::as_strided_tensorimpl(viewable(self, size, stride, offset.value_or(self.storage_offset())), size,
                                           stride, offset);
}

at::Tensor view(const at::Tensor& self, at::IntArrayRef size) {
  if (internalDesc(self) == nullptr || self.sizes() == size) return at::native::view(self, size);
  return at::native::view(viewable(self, {}, {}, -1), size);
}

at::Tensor reshapeAlias(const at::Tensor& self, at::IntArrayRef size, at::IntArrayRef stride) {
  return at::native::_reshape_alias(viewable(self, size, stride, self.storage_offset()), size, stride);
}

// `kernel`, with what its checks raise marked as an argument error.
template <auto kernel>
struct MarkingArgumentErrors;

template <typename Result, typename... Args, Result (*kernel)(Args...)>
struct MarkingArgumentErrors<kernel> {
  static Result call(Args... args) {
    try {
      return kernel(args...);
    } catch (c10::Error& e) {
      markArgumentError(e);
      throw;
    }
  }
};

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("as_strided", TORCH_FN(MarkingArgumentErrors<&asStrided>::call));
  m.impl("view", TORCH_FN(MarkingArgumentErrors<&view>::call));
  m.impl("_reshape_alias", TORCH_FN(MarkingArgumentErrors<&reshapeAlias>::call));
  m.impl("unfold", TORCH_FN(MarkingArgumentErrors<&at::native::unfold>::call));
  m.impl("view_as_real", TORCH_FN(MarkingArgumentErrors<&at::native::view_as_real>::call));
  m.impl("view_as_complex", TORCH_FN(MarkingArgumentErrors<&at::native::view_as_complex>::call));
}

}  // namespace
}  // namespace torch_npu
