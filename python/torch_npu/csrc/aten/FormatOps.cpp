// torch_npu's format ops in the npu namespace: npu_format_cast, npu_format_cast_ (by
// number or like another tensor), get_npu_format, get_npu_storage_sizes,
// empty_with_format; and the binding behind torch.npu.config.allow_internal_format.
//
// A conversion is a host task on the current stream over CPU aliases of the device
// memory (NpuFormat.cpp), ordered after the work that produced its input.
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/PyBindRegistry.h"
#include "torch_npu/csrc/core/NpuDevice.h"
#include "torch_npu/csrc/core/NpuFormat.h"

namespace torch_npu {
namespace {

void checkNpu(const at::Tensor& t, const char* op) {
  TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, op, " expects an npu tensor, got one on ",
              t.device(), "; move it with .npu() first\n", ptaErr(ErrCode::PARAM));
}

// The format a request for `format` gets: internal formats only while they are allowed.
AclFormat grantedFormat(int64_t format, at::IntArrayRef sizes) {
  AclFormat wanted = checkedFormat(format, sizes);
  if (!isInternalFormat(wanted) || allowInternalFormat()) return wanted;
  TORCH_WARN_ONCE("torch.npu.config.allow_internal_format is False, so tensors are kept in their base format ",
                  "(acl_format ", format, " was asked for). Set torch.npu.config.allow_internal_format = True ",
                  "to store tensors in internal formats.");
  return baseFormatOf(static_cast<int64_t>(sizes.size()));
}

at::Tensor formatCastTo(const at::Tensor& self, AclFormat format) {
  if (npuFormatOf(self) == format) return self;
  c10::DeviceGuard guard(self.device());
  at::Tensor out = emptyWithFormat(self.sizes(), self.options(), format);
  at::Tensor source = internalDesc(self) != nullptr ? toBaseFormat(self) : self;
  if (isInternalFormat(format)) {
    writeFormatted(out, source);
  } else {
    out.copy_(source);
  }
  return out;
}

at::Tensor npuFormatCast(const at::Tensor& self, int64_t format) {
  checkNpu(self, "npu_format_cast");
  return formatCastTo(self, grantedFormat(format, self.sizes()));
}

// The storage of self is replaced by one in the new format: views taken of self before
// keep the old storage, as in torch_npu.
at::Tensor& restoreAs(at::Tensor& self, const at::Tensor& converted) {
  if (converted.is_same(self)) return self;
  c10::TensorImpl* impl = self.unsafeGetTensorImpl();
  impl->set_storage_keep_dtype(converted.storage());
  impl->set_storage_offset(0);
  impl->set_sizes_contiguous(converted.sizes());
  self.unsafeGetTensorImpl()->bump_version();
  return self;
}

at::Tensor& npuFormatCastInplace(at::Tensor& self, int64_t format) {
  checkNpu(self, "npu_format_cast_");
  return restoreAs(self, formatCastTo(self, grantedFormat(format, self.sizes())));
}

at::Tensor& npuFormatCastLike(at::Tensor& self, const at::Tensor& src) {
  checkNpu(self, "npu_format_cast_");
  checkNpu(src, "npu_format_cast_");
  return npuFormatCastInplace(self, static_cast<int64_t>(npuFormatOf(src)));
}

int64_t getNpuFormat(const at::Tensor& self) {
  checkNpu(self, "get_npu_format");
  return static_cast<int64_t>(npuFormatOf(self));
}

std::vector<int64_t> getNpuStorageSizes(const at::Tensor& self) {
  checkNpu(self, "get_npu_storage_sizes");
  const NpuStorageDesc* desc = storageDesc(self);
  return desc != nullptr ? desc->storageSizes : self.sizes().vec();
}

at::Tensor emptyWithFormatOp(at::IntArrayRef size, std::optional<at::ScalarType> dtype,
                             std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                             std::optional<bool> pinMemory, int64_t format) {
  TORCH_CHECK(!device.has_value() || device->type() == c10::DeviceType::PrivateUse1,
              "empty_with_format creates npu tensors, got device=", *device, "\n", ptaErr(ErrCode::PARAM));
  TORCH_CHECK(layout.value_or(c10::kStrided) == c10::kStrided && !pinMemory.value_or(false),
              "empty_with_format supports only the strided layout and pin_memory=False\n",
              ptaErr(ErrCode::NOT_SUPPORT));
  for (int64_t s : size) {
    TORCH_CHECK(s >= 0, "empty_with_format: negative dimension ", s, " in size ", size, "\n",
                ptaErr(ErrCode::PARAM));
  }
  c10::DeviceIndex index = device.has_value() && device->has_index() ? device->index() : currentDevice();
  c10::Device target(c10::DeviceType::PrivateUse1, resolveDevice(index));
  c10::DeviceGuard guard(target);
  at::TensorOptions options = at::TensorOptions().dtype(c10::dtype_or_default(dtype)).device(target);
  return emptyWithFormat(size, options, grantedFormat(format, size));
}

TORCH_LIBRARY_FRAGMENT(npu, m) {
  m.def("npu_format_cast(Tensor self, int acl_format) -> Tensor");
  m.def("npu_format_cast_.acl_format(Tensor(a!) self, int acl_format) -> Tensor(a!)");
  m.def("npu_format_cast_(Tensor(a!) self, Tensor src) -> Tensor(a!)");
  m.def("get_npu_format(Tensor self) -> int");
  m.def("get_npu_storage_sizes(Tensor self) -> int[]");
  m.def(
      "empty_with_format(int[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
      "bool? pin_memory=None, int acl_format=2) -> Tensor");
}

TORCH_LIBRARY_IMPL(npu, PrivateUse1, m) {
  m.impl("npu_format_cast", TORCH_FN(npuFormatCast));
  m.impl("npu_format_cast_.acl_format", TORCH_FN(npuFormatCastInplace));
  m.impl("npu_format_cast_", TORCH_FN(npuFormatCastLike));
  m.impl("get_npu_format", TORCH_FN(getNpuFormat));
  m.impl("get_npu_storage_sizes", TORCH_FN(getNpuStorageSizes));
}

// On the CPU the same kernels explain that they need an npu tensor.
TORCH_LIBRARY_IMPL(npu, CPU, m) {
  m.impl("npu_format_cast", TORCH_FN(npuFormatCast));
  m.impl("get_npu_format", TORCH_FN(getNpuFormat));
}

// A factory op has no tensor to dispatch on: its kernel picks the npu device itself.
TORCH_LIBRARY_IMPL(npu, CompositeExplicitAutograd, m) { m.impl("empty_with_format", TORCH_FN(emptyWithFormatOp)); }

TORCH_NPU_BINDINGS(bindFormats) {
  m.def("_npu_get_allow_internal_format", &allowInternalFormat);
  m.def("_npu_set_allow_internal_format", &setAllowInternalFormat);
}

}  // namespace
}  // namespace torch_npu
