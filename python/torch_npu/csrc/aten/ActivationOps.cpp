// npu_swiglu and its backward: checked at the boundary, then one compiled kernel per call
// (the reference they compile from is python/torch_npu/eager/swiglu.py).
#include <torch/library.h>

#include "torch_npu/csrc/aten/CustomOpChecks.h"
#include "torch_npu/csrc/eager/OpCommand.h"

namespace torch_npu::native {
namespace {

// The dimension `self` is split along, which must hold two equal halves.
int64_t checkedSplitDim(const char* op, const at::Tensor& self, int64_t dim) {
  int64_t d = wrapDim(op, dim, self.dim());
  TORCH_CHECK(self.size(d) % 2 == 0, op, ": self has size ", self.size(d), " along dim ", dim,
              ", which must be even (it is split into two halves)\n", opsErr(ErrCode::PARAM));
  return d;
}

at::Tensor npuSwiglu(const at::Tensor& self, int64_t dim) {
  checkNpuFloating("npu_swiglu", "self", self);
  checkedSplitDim("npu_swiglu", self, dim);
  return eager::OpCommand().Name("npu::npu_swiglu").Input(self).Attr("dim", dim).Run()[0];
}

at::Tensor npuSwigluBackward(const at::Tensor& gradOutput, const at::Tensor& self, int64_t dim) {
  const char* op = "npu_swiglu_backward";
  checkNpuFloating(op, "self", self);
  checkNpuFloating(op, "grad_output", gradOutput);
  checkSameDtype(op, "grad_output", gradOutput, "self", self);
  int64_t d = checkedSplitDim(op, self, dim);
  std::vector<int64_t> half = self.sizes().vec();
  half[d] /= 2;
  checkSameShape(op, "grad_output", gradOutput, "self with dim halved", half);
  return eager::OpCommand().Name("npu::npu_swiglu_backward").Input(gradOutput).Input(self).Attr("dim", dim).Run()[0];
}

TORCH_LIBRARY_IMPL(npu, PrivateUse1, m) {
  m.impl("npu_swiglu", &npuSwiglu);
  m.impl("npu_swiglu_backward", &npuSwigluBackward);
}

}  // namespace
}  // namespace torch_npu::native
