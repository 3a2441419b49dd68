// Native PrivateUse1 kernels that allocate or re-point storage: empty, empty_strided,
// resize_, set_ (every overload), record_stream, arange's out= form, _efficientzerotensor, and whether
// `t.data = npu_tensor` may re-point a tensor (_has_compatible_shallow_copy_type). m.impl kernels get no automatic
// device guard, so each allocating kernel sets one.
#include <ATen/EmptyTensor.h>
#include <ATen/native/Resize.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/core/NpuAllocator.h"
#include "torch_npu/csrc/core/NpuDevice.h"
#include "torch_npu/csrc/core/NpuFormat.h"
#include "torch_npu/csrc/eager/OpCommand.h"

namespace torch_npu {
namespace {

constexpr c10::DispatchKeySet kNpuKeys{c10::DispatchKey::PrivateUse1};

c10::Device targetDevice(std::optional<c10::Device> device) {
  c10::DeviceIndex index = device.has_value() && device->has_index() ? device->index() : currentDevice();
  return {c10::DeviceType::PrivateUse1, resolveDevice(index)};
}

void checkPlainLayout(std::optional<c10::Layout> layout, std::optional<bool> pinMemory) {
  TORCH_CHECK(layout.value_or(c10::kStrided) == c10::kStrided, "NPU tensors support only the strided layout, got ",
              *layout, "\n", ptaErr(ErrCode::NOT_SUPPORT));
  TORCH_CHECK(!pinMemory.value_or(false), "only CPU tensors can be pinned; pin_memory=True needs device='cpu'\n",
              ptaErr(ErrCode::PARAM));
}

at::Tensor empty(at::IntArrayRef size, std::optional<at::ScalarType> dtype, std::optional<c10::Layout> layout,
                 std::optional<c10::Device> device, std::optional<bool> pinMemory,
                 std::optional<c10::MemoryFormat> memoryFormat) {
  checkPlainLayout(layout, pinMemory);
  c10::DeviceGuard guard(targetDevice(device));
  return at::detail::empty_generic(size, npuAllocator(), kNpuKeys, c10::dtype_or_default(dtype), memoryFormat);
}

at::Tensor emptyStrided(at::IntArrayRef size, at::IntArrayRef stride, std::optional<at::ScalarType> dtype,
                        std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                        std::optional<bool> pinMemory) {
  checkPlainLayout(layout, pinMemory);
  c10::DeviceGuard guard(targetDevice(device));
  return at::detail::empty_strided_generic(size, stride, npuAllocator(), kNpuKeys, c10::dtype_or_default(dtype));
}

void ensureStorageHolds(const at::Tensor& self) {
  size_t needed = at::detail::computeStorageNbytes(self.sizes(), self.strides(), self.dtype().itemsize(),
                                                   self.storage_offset());
  if (needed > self.storage().nbytes()) resizeStorageBytes(self.storage(), needed);
}

const at::Tensor& resize(const at::Tensor& self, at::IntArrayRef size,
                         std::optional<c10::MemoryFormat> memoryFormat) {
  if (self.sizes() == size && !memoryFormat.has_value()) return self;
  // Its storage sizes follow from the logical sizes: a new shape needs a new layout.
  TORCH_CHECK(internalDesc(self) == nullptr, "resize_ of a tensor stored in internal format ",
              static_cast<int64_t>(npuFormatOf(self)), " is not supported; call torch_npu.npu_format_cast_(t, 2) ",
              "first to store it in ND\n", ptaErr(ErrCode::NOT_SUPPORT));
  c10::DeviceGuard guard(self.device());
  c10::TensorImpl* impl = self.unsafeGetTensorImpl();
  impl->set_sizes_contiguous(size);
  if (memoryFormat.has_value()) {
    TORCH_CHECK(*memoryFormat != c10::MemoryFormat::Preserve, "resize_ does not accept memory_format=preserve\n",
                ptaErr(ErrCode::PARAM));
    impl->empty_tensor_restride(*memoryFormat);
  }
  ensureStorageHolds(self);
  return self;
}

at::Tensor& setStorageWithOffset(at::Tensor& self, at::Storage source, int64_t offset, at::IntArrayRef size,
                                 at::IntArrayRef stride) {
  TORCH_CHECK(source.device_type() == c10::DeviceType::PrivateUse1, "set_ needs an NPU storage, got one on ",
              source.device(), "\n", ptaErr(ErrCode::PARAM));
  at::native::checkSetStorage(self, std::move(source), offset, size, stride);
  c10::TensorImpl* impl = self.unsafeGetTensorImpl();
  impl->set_storage_offset(offset);
  if (stride.empty()) {
    impl->set_sizes_contiguous(size);
  } else {
    impl->set_sizes_and_strides(size, stride);
  }
  c10::DeviceGuard guard(self.device());
  ensureStorageHolds(self);
  return self;
}

at::Tensor& setStorage(at::Tensor& self, at::Storage source) {
  int64_t elements = static_cast<int64_t>(source.nbytes() / self.dtype().itemsize());
  return setStorageWithOffset(self, std::move(source), 0, {elements}, {});
}

at::Tensor& setTensor(at::Tensor& self, const at::Tensor& source) {
  if (self.is_same(source)) return self;
  return setStorageWithOffset(self, source.storage(), source.storage_offset(), source.sizes(), source.strides());
}

// set_() with no source: an empty storage from the NPU allocator (at::native::set_cpu_
// would attach a CPU one).
at::Tensor& setEmpty(at::Tensor& self) {
  c10::DeviceGuard guard(self.device());
  at::Storage storage(at::Storage::use_byte_size_t(), 0, npuAllocator(), /*resizable=*/true);
  return setStorageWithOffset(self, std::move(storage), 0, {0}, {});
}

void recordStream(at::Tensor& self, c10::Stream stream) {
  npuAllocator()->recordStream(self.storage().data_ptr(), stream);
}

// c10's list of dense backends has no PrivateUse1, so without this a CPU Parameter and its npu
// copy count as incompatible: Module.npu() then builds a new Parameter per module instead of
// re-pointing the existing one, and weights tied across modules (GPT-2's wte / lm_head) become
// two independent tensors. Strided CPU, CUDA and npu tensors share one TensorImpl shape.
bool hasCompatibleShallowCopyType(const at::Tensor& self, const at::Tensor& from) {
  auto dense = [](const at::Tensor& t) {
    return t.layout() == c10::kStrided && (t.is_cpu() || t.is_cuda() || t.is_privateuseone());
  };
  if (dense(self) && dense(from)) return true;
  return self.unsafeGetTensorImpl()->has_compatible_shallow_copy_type(from.key_set());
}

// torch.arange(..., device="npu") reaches this through its composite. A kernel with no tensor
// input cannot see `out`, so the compiled call is the functional arange.start_step with out's
// dtype (part of the key) on out's device (the guard). fp16/bf16 values are computed in float, as
// the CPU kernel accumulates them, and rounded once by the copy into `out`.
at::Tensor& arangeOut(const at::Scalar& start, const at::Scalar& end, const at::Scalar& step, at::Tensor& out) {
  c10::DeviceGuard guard(out.device());
  at::ScalarType dtype = out.scalar_type();
  at::ScalarType compute = dtype == at::kHalf || dtype == at::kBFloat16 ? at::kFloat : dtype;
  eager::OpCommand()
      .Name("aten::arange.start_step")
      .Attr("start", start)
      .Attr("end", end)
      .Attr("step", step)
      .Attr("dtype", compute)
      .Output(out)
      .Run();
  return out;
}

// Backward formulas return _efficientzerotensor for a gradient known to be zero (sgn's of a real
// input). The CPU's is a ZeroTensor that holds no memory; here it is zeros written by the compiled
// zero_ kernel: the same values, which every consumer reads as plain zeros.
at::Tensor efficientZeroTensor(at::IntArrayRef size, std::optional<at::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pinMemory) {
  return empty(size, dtype, layout, device, pinMemory, std::nullopt).zero_();
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_has_compatible_shallow_copy_type", TORCH_FN(hasCompatibleShallowCopyType));
  m.impl("empty.memory_format", TORCH_FN(empty));
  m.impl("empty_strided", TORCH_FN(emptyStrided));
  m.impl("resize_", TORCH_FN(resize));
  m.impl("set_.source_Storage_storage_offset", TORCH_FN(setStorageWithOffset));
  m.impl("set_.source_Storage", TORCH_FN(setStorage));
  m.impl("set_.source_Tensor", TORCH_FN(setTensor));
  m.impl("set_", TORCH_FN(setEmpty));
  m.impl("record_stream", TORCH_FN(recordStream));
  m.impl("arange.start_out", TORCH_FN(arangeOut));
  m.impl("_efficientzerotensor", TORCH_FN(efficientZeroTensor));
}

}  // namespace
}  // namespace torch_npu
