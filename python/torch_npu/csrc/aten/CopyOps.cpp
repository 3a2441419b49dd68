// Copies and scalar reads: _copy_from (H2D, D2H, D2D), _copy_from_and_resize,
// _local_scalar_dense, fill_ / zero_. A tensor in an internal format (NpuFormat.h) is
// read through a base-format copy and written by a conversion task. Every copy is a task on the current stream of
// the NPU side; byte-identical layouts use the runtime's memcpy task, anything else
// (dtype conversion, strides) a host task over CPU aliases. A copy returns at once
// only when CUDA's would: D2D always, H2D/D2H with non_blocking=True and pinned
// host memory; otherwise it waits for its stream.
#include <ATen/core/Tensor.h>
#include <ATen/ops/_local_scalar_dense.h>
#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/aten/CpuAlias.h"
#include "torch_npu/csrc/core/NpuAllocator.h"
#include "torch_npu/csrc/core/NpuFormat.h"
#include "torch_npu/csrc/core/NpuStream.h"
#include "torch_npu/csrc/npu/OverflowCheck.h"

namespace torch_npu {
namespace {

bool isNpu(const at::Tensor& t) { return t.device().type() == c10::DeviceType::PrivateUse1; }

// Stored in an internal format and read as such (torch's storage-level byte copies are raw).
bool isFormatted(const at::Tensor& t) {
  return isNpu(t) && internalDesc(t) != nullptr && !isWholeStorageBytes(t);
}

// Host tasks capture non-owning aliases only: dropping a tensor that owns a Python
// object on a stream worker would need the GIL the waiting caller may hold.
//
// The task may run after the caller dropped the tensor: keep its block from being
// reused by another stream until the task has run.
void useOnStream(const at::Tensor& npuTensor, c10::Stream stream) {
  npuAllocator()->recordStream(npuTensor.storage().data_ptr(), stream);
}

// A pinned host block a queued copy reads or writes stays out of the pinned cache's reuse
// until the copy's stream has passed this point, as torch.cuda's record_event does, even
// if the tensor is freed first (its next request of that size gets another block).
void usePinnedOnStream(const at::Tensor& hostTensor, c10::Stream stream) {
  const c10::Storage& storage = hostTensor.storage();
  pinnedAllocator()->record_event(storage.mutable_data(), storage.data_ptr().get_context(), stream);
}

void memcpyTask(void* dst, const void* src, size_t nbytes, aclrtMemcpyKind kind, c10::Stream stream) {
  if (nbytes == 0) return;
  NPU_CHECK_ACL(aclrtMemcpyAsync(dst, nbytes, src, nbytes, kind, nativeStream(stream)));
}

// A dtype conversion on the device is a Cast kernel on a 910B: an overflow in it counts.
void checkConversionForOverflow(const at::Tensor& src, const at::Tensor& dst, c10::Stream stream) {
  if (overflowCheckArmed() && src.scalar_type() != dst.scalar_type()) checkResultsForOverflow({dst}, stream);
}

void copyHostToDevice(const at::Tensor& src, const at::Tensor& dst, bool nonBlocking) {
  c10::DeviceGuard guard(dst.device());
  c10::Stream stream = getCurrentStream(dst.device().index());
  bool async = nonBlocking && isPinnedPtr(src.storage().data());
  if (memcpyCompatible(src, dst)) {
    memcpyTask(dst.data_ptr(), src.const_data_ptr(), src.nbytes(), ACL_MEMCPY_HOST_TO_DEVICE, stream);
  } else {
    at::Tensor dstAlias = cpuAlias(dst);
    at::Tensor srcAlias = cpuAlias(src);
    launchHostTask(stream, [dstAlias, srcAlias]() mutable { dstAlias.copy_(srcAlias); });
    checkConversionForOverflow(src, dst, stream);
  }
  if (async) {
    usePinnedOnStream(src, stream);
  } else {
    synchronizeStream(stream);
  }
}

void copyDeviceToHost(const at::Tensor& src, const at::Tensor& dst, bool nonBlocking) {
  c10::DeviceGuard guard(src.device());
  c10::Stream stream = getCurrentStream(src.device().index());
  bool async = nonBlocking && isPinnedPtr(dst.storage().data());
  if (!async) reportSynchronizingCall("copy from NPU to CPU");
  if (memcpyCompatible(src, dst)) {
    memcpyTask(dst.data_ptr(), src.const_data_ptr(), src.nbytes(), ACL_MEMCPY_DEVICE_TO_HOST, stream);
  } else {
    at::Tensor srcAlias = cpuAlias(src);
    at::Tensor dstAlias = cpuAlias(dst);
    launchHostTask(stream, [srcAlias, dstAlias]() mutable { dstAlias.copy_(srcAlias); });
  }
  if (async) {
    useOnStream(src, stream);
    usePinnedOnStream(dst, stream);
  } else {
    synchronizeStream(stream);
  }
}

void copyDeviceToDevice(const at::Tensor& src, const at::Tensor& dst) {
  bool crossDevice = src.device() != dst.device();
  // Across devices the source must be complete before the destination stream reads it.
  if (crossDevice) synchronizeStream(getCurrentStream(src.device().index()));
  c10::DeviceGuard guard(dst.device());
  c10::Stream stream = getCurrentStream(dst.device().index());
  if (memcpyCompatible(src, dst)) {
    memcpyTask(dst.data_ptr(), src.const_data_ptr(), src.nbytes(), ACL_MEMCPY_DEVICE_TO_DEVICE, stream);
  } else {
    at::Tensor srcAlias = cpuAlias(src);
    at::Tensor dstAlias = cpuAlias(dst);
    launchHostTask(stream, [srcAlias, dstAlias]() mutable { dstAlias.copy_(srcAlias); });
    checkConversionForOverflow(src, dst, stream);
  }
  useOnStream(src, stream);
  // The source device's stream may overwrite src next; CUDA orders that with events,
  // here the copy completes before returning.
  if (crossDevice) synchronizeStream(stream);
}

at::Tensor copyFrom(const at::Tensor& self, const at::Tensor& dst, bool nonBlocking);

// Host copies go through the base format: the internal-format side is converted on its
// device, the rest is an ordinary copy.
void copyWithFormats(const at::Tensor& self, const at::Tensor& dst, bool nonBlocking) {
  at::Tensor source = isFormatted(self) ? toBaseFormat(self) : self;
  if (!isFormatted(dst)) {
    copyFrom(source, dst, nonBlocking);
    return;
  }
  if (!isNpu(source) || source.device() != dst.device()) {
    at::Tensor staging = at::empty(dst.sizes(), dst.options());
    copyFrom(source, staging, false);
    source = staging;
  }
  writeFormatted(dst, source);
}

at::Tensor copyFrom(const at::Tensor& self, const at::Tensor& dst, bool nonBlocking) {
  TORCH_CHECK(self.sizes() == dst.sizes(), "copy between ", self.sizes(), " and ", dst.sizes(),
              ": _copy_from needs equal shapes (copy_ broadcasts before it)\n", ptaErr(ErrCode::PARAM));
  if (self.numel() == 0) return dst;
  if (isFormatted(self) || isFormatted(dst)) {
    copyWithFormats(self, dst, nonBlocking);
    return dst;
  }
  if (isNpu(dst) && isNpu(self)) {
    copyDeviceToDevice(self, dst);
  } else if (isNpu(dst)) {
    TORCH_CHECK(self.device().is_cpu(), "cannot copy from ", self.device(), " to NPU\n", ptaErr(ErrCode::NOT_SUPPORT));
    copyHostToDevice(self, dst, nonBlocking);
  } else {
    TORCH_CHECK(dst.device().is_cpu(), "cannot copy from NPU to ", dst.device(), "\n", ptaErr(ErrCode::NOT_SUPPORT));
    copyDeviceToHost(self, dst, nonBlocking);
  }
  return dst;
}

at::Tensor copyFromAndResize(const at::Tensor& self, const at::Tensor& dst) {
  if (dst.sizes() != self.sizes()) dst.resize_(self.sizes());
  return copyFrom(self, dst, false);
}

at::Scalar localScalarDense(const at::Tensor& self) {
  if (isFormatted(self)) return localScalarDense(toBaseFormat(self));
  c10::DeviceGuard guard(self.device());
  reportSynchronizingCall("reading an NPU tensor's value (item())");
  synchronizeStream(getCurrentStream(self.device().index()));
  return at::_local_scalar_dense(cpuAlias(self));
}

at::Tensor& fill(at::Tensor& self, const at::Scalar& value) {
  if (self.numel() == 0) return self;
  c10::DeviceGuard guard(self.device());
  if (isFormatted(self)) {
    // The padding must stay zero: fill the logical values only.
    at::Tensor values = at::empty(self.sizes(), self.options());
    fill(values, value);
    writeFormatted(self, values);
    return self;
  }
  c10::Stream stream = getCurrentStream(self.device().index());
  bool zero = !value.isComplex() && value.equal(0) && !self.is_conj() && !self.is_neg();
  if (zero && self.is_non_overlapping_and_dense()) {
    // All-zero bytes are 0 in every dtype: one memset task.
    NPU_CHECK_ACL(aclrtMemsetAsync(self.data_ptr(), self.nbytes(), 0, self.nbytes(), nativeStream(stream)));
  } else {
    at::Tensor alias = cpuAlias(self);
    launchHostTask(stream, [alias, value]() mutable { alias.fill_(value); });
  }
  return self;
}

at::Tensor& fillTensor(at::Tensor& self, const at::Tensor& value) {
  TORCH_CHECK(value.dim() == 0, "fill_ only supports a 0-dimension value tensor, but it has ", value.dim(),
              " dimensions\n", ptaErr(ErrCode::PARAM));
  return fill(self, value.item());
}

at::Tensor& zero(at::Tensor& self) { return fill(self, 0); }

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_copy_from", TORCH_FN(copyFrom));
  m.impl("_copy_from_and_resize", TORCH_FN(copyFromAndResize));
  m.impl("_local_scalar_dense", TORCH_FN(localScalarDense));
  m.impl("fill_.Scalar", TORCH_FN(fill));
  m.impl("fill_.Tensor", TORCH_FN(fillTensor));
  m.impl("zero_", TORCH_FN(zero));
}

}  // namespace
}  // namespace torch_npu
