// torch.equal on NPU tensors: a reduction to one bool read on the host. The comparison and the
// all-reduction are the eager dispatcher's compiled eq / all kernels; only their one-element result
// is copied back (item() waits for the stream, as the CPU's answer must exist before it returns).
#include <ATen/ATen.h>
#include <torch/library.h>

#include "torch_npu/csrc/aten/CustomOpChecks.h"

namespace torch_npu::native {
namespace {

// As ATen's cpu_equal: tensors on two devices are an error; other sizes are unequal; other dtypes
// compare after type promotion (equal(float 1., int 1) is true); NaN equals nothing.
bool npuEqual(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.device() == other.device(), "Cannot compare two tensors on different devices. Got: ", self.device(),
              " and ", other.device(), "; move both to one device first\n", opsErr(ErrCode::PARAM));
  if (!self.is_same_size(other)) return false;
  if (self.numel() == 0) return true;
  return at::eq(self, other).all().item<bool>();
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("equal", &npuEqual); }

}  // namespace
}  // namespace torch_npu::native
