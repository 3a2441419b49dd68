// torch_npu.npu_change_data_ptr(dst, src, index): move dst into src's memory, without copying: dst's
// first element is now element `index` of src (dst keeps its sizes and strides).
// torch_npu.utils.npu_combine_tensors builds on it: the fused optimizers (torch_npu.optim) gather every
// parameter, gradient and state of one dtype into one contiguous buffer, and each tensor keeps its
// identity while its bytes live inside the buffer, so a step is a few kernels over the buffers
// instead of launches per parameter. dst's old allocation is released.
// Unlike torch_npu, which swaps in a raw non-owning pointer, dst is re-seated on src's storage
// itself: the caching allocator only tracks its own blocks (record_stream, stream-ordered reuse
// and memory stats need the block's DataPtr), and dst can never point at freed memory.
#include <c10/core/TensorImpl.h>
#include <torch/library.h>

#include "torch_npu/csrc/aten/CustomOpChecks.h"
#include "torch_npu/csrc/core/NpuFormat.h"

namespace torch_npu::native {
namespace {

int64_t npuChangeDataPtr(const at::Tensor& dst, const at::Tensor& src, int64_t index) {
  const char* op = "npu_change_data_ptr";
  for (auto [name, t] : {std::pair<const char*, const at::Tensor&>{"dst", dst}, {"src", src}}) {
    TORCH_CHECK(t.defined() && t.device().type() == c10::DeviceType::PrivateUse1, op, ": ", name, " is on ",
                t.defined() ? t.device().str() : "no device (undefined)", "; both tensors must be NPU tensors\n",
                opsErr(ErrCode::PARAM));
    TORCH_CHECK(internalDesc(t) == nullptr, op, ": ", name,
                " has an internal storage format; cast it to its base format with npu_format_cast first\n",
                opsErr(ErrCode::NOT_SUPPORT));
  }
  TORCH_CHECK(dst.scalar_type() == src.scalar_type(), op, ": dst has dtype ", dst.scalar_type(), ", src has ",
              src.scalar_type(), "; they must match (index counts src's elements)\n", opsErr(ErrCode::TYPE));
  TORCH_CHECK(dst.device() == src.device(), op, ": dst is on ", dst.device(), ", src on ", src.device(),
              "; they must be on one device\n", opsErr(ErrCode::PARAM));
  // The elements dst spans, from its first: 1 + sum((size - 1) * stride).
  int64_t extent = dst.numel() == 0 ? 0 : 1;
  for (int64_t d = 0; d < dst.dim(); ++d) extent += (dst.size(d) - 1) * dst.stride(d);
  const int64_t srcElems = static_cast<int64_t>(src.storage().nbytes() / src.itemsize()) - src.storage_offset();
  TORCH_CHECK(index >= 0 && index + extent <= srcElems, op, ": index ", index, " + the ", extent,
              " elements dst spans exceed src's ", srcElems, " elements; pass an index in [0, ", srcElems - extent,
              "]\n", opsErr(ErrCode::VALUE));
  c10::TensorImpl* impl = dst.unsafeGetTensorImpl();
  impl->set_storage_keep_dtype(src.storage());
  impl->set_storage_offset(src.storage_offset() + index);
  return 0;
}

TORCH_LIBRARY_IMPL(npu, PrivateUse1, m) { m.impl("npu_change_data_ptr", &npuChangeDataPtr); }

}  // namespace
}  // namespace torch_npu::native
