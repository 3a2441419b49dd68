#include "torch_npu/csrc/aten/CpuAlias.h"

#include <c10/core/CPUAllocator.h>
#include <c10/core/TensorImpl.h>

namespace torch_npu {
namespace {

void releaseNothing(void*) {}

}  // namespace

at::Tensor cpuAlias(const at::Tensor& npuTensor) {
  const c10::Storage& storage = npuTensor.storage();
  void* base = storage.mutable_data();
  c10::Storage cpuStorage(c10::Storage::use_byte_size_t(), storage.nbytes(),
                          c10::DataPtr(base, base, &releaseNothing, c10::Device(c10::DeviceType::CPU)),
                          c10::GetCPUAllocator(), /*resizable=*/true);
  auto alias = at::detail::make_tensor<c10::TensorImpl>(std::move(cpuStorage),
                                                       c10::DispatchKeySet(c10::DispatchKey::CPU),
                                                       npuTensor.dtype());
  alias.unsafeGetTensorImpl()->set_sizes_and_strides(npuTensor.sizes(), npuTensor.strides(),
                                                     npuTensor.storage_offset());
  return alias;
}

bool memcpyCompatible(const at::Tensor& a, const at::Tensor& b) {
  return a.dtype() == b.dtype() && a.sizes() == b.sizes() && a.strides() == b.strides() &&
         a.is_non_overlapping_and_dense() && !a.is_conj() && !b.is_conj() && !a.is_neg() && !b.is_neg();
}

}  // namespace torch_npu
