// Ops whose result shape depends on the data: nonzero, boolean-mask indexing (x[mask]), masked_select,
// masked_scatter_. As on CUDA, the count of True / nonzero elements is read on the host (one stream
// synchronization, like torch.cuda's nonzero); everything else runs compiled:
// - nonzero is nonzero_static (decompositions/masked.py) with the count rounded up to a power of two,
//   so a tensor shape compiles at most log2(numel) + 1 kernels, not one per count; its first `count`
//   rows are the answer.
// - index.Tensor with a bool / uint8 mask takes the mask's nonzero positions as long indices, as
//   ATen's expandTensors does, then the compiled index.Tensor_out; autograd keeps the mask (its
//   backward is index_put with it, compiled).
// - masked_select is x[mask] over their broadcast shape; masked_scatter_ is index_put_ with the mask
//   and the first `count` source elements.
// - _unique / _unique2 (torch.unique without dim) sort, as the CPU does whatever `sorted` says: the
//   first element of each run of equal sorted values is kept (x[mask]); NaNs are all distinct; the
//   inverse is each element's run number, scattered back through the sort's order.
#include <ATen/ExpandUtils.h>
#include <ATen/Functions.h>
#include <ATen/WrapDimUtils.h>
#include <torch/library.h>

#include <tuple>
#include <vector>

#include "torch_npu/csrc/aten/CustomOpChecks.h"

namespace torch_npu::native {
namespace {

bool isMask(const std::optional<at::Tensor>& index) {
  return index.has_value() && index->defined() &&
         (index->scalar_type() == at::kBool || index->scalar_type() == at::kByte);
}

c10::List<std::optional<at::Tensor>> onlyIndex(const at::Tensor& mask) {
  c10::List<std::optional<at::Tensor>> indices;
  indices.push_back(mask);
  return indices;
}

int64_t nonzeroCount(const at::Tensor& self) { return at::count_nonzero(self).item<int64_t>(); }

at::Tensor npuNonzero(const at::Tensor& self) {
  const int64_t count = nonzeroCount(self);
  at::TensorOptions longs = self.options().dtype(at::kLong);
  if (count == 0 || self.dim() == 0) return at::empty({count, self.dim()}, longs);
  int64_t rows = 1;
  while (rows < count) rows <<= 1;
  rows = std::min(rows, self.numel());
  at::Tensor padded = at::nonzero_static(self, rows, -1);
  return rows == count ? padded : padded.narrow(0, 0, count).clone();
}

// index.Tensor's output as the CPU allocates it (the op's meta function on meta tensors), written by
// the compiled index.Tensor_out.
at::Tensor indexWithoutMasks(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices) {
  auto meta = [](const at::Tensor& t) {
    return at::empty_strided(t.sizes(), t.strides(), t.options().device(at::kMeta));
  };
  c10::List<std::optional<at::Tensor>> metaIndices;
  for (const std::optional<at::Tensor>& index : indices) {
    metaIndices.push_back(index.has_value() && index->defined() ? std::optional<at::Tensor>(meta(*index))
                                                                : std::optional<at::Tensor>());
  }
  at::Tensor shape = at::index(meta(self), metaIndices);
  at::Tensor out = at::empty_strided(shape.sizes(), shape.strides(), self.options());
  return at::index_out(out, self, indices);
}

at::Tensor npuIndex(const at::Tensor& self, const c10::List<std::optional<at::Tensor>>& indices) {
  bool masked = false;
  for (const std::optional<at::Tensor>& index : indices) masked |= isMask(index);
  if (!masked) return indexWithoutMasks(self, indices);
  // A k-dim mask at dim d stands for k long indices: the coordinates of its True elements (ATen's
  // expandTensors, with its shape check and message). A 0-d mask indexes a new dim of size 1.
  at::Tensor base = self;
  c10::List<std::optional<at::Tensor>> expanded;
  int64_t dim = 0;
  for (const std::optional<at::Tensor>& index : indices) {
    if (!isMask(index)) {
      expanded.push_back(index);
      ++dim;
      continue;
    }
    at::Tensor mask = *index;
    if (mask.dim() == 0) {
      base = base.unsqueeze(dim);
      mask = mask.unsqueeze(0);
    }
    for (int64_t j = 0; j < mask.dim(); ++j) {
      const int64_t srcIdx = dim + j;
      TORCH_CHECK_INDEX(srcIdx < base.dim() && mask.size(j) == base.size(srcIdx), "The shape of the mask ",
                        mask.sizes(), " at index ", j, " does not match the shape of the indexed tensor ",
                        self.sizes(), " at index ", srcIdx, "\n", opsErr(ErrCode::PARAM));
    }
    at::Tensor positions = npuNonzero(mask);
    for (int64_t j = 0; j < mask.dim(); ++j) expanded.push_back(positions.select(1, j));
    dim += mask.dim();
  }
  return indexWithoutMasks(base, expanded);
}

at::Tensor maskedSelect(const at::Tensor& self, const at::Tensor& mask) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_select: expected BoolTensor for mask\n",
              opsErr(ErrCode::TYPE));
  auto [values, where] = at::expand_outplace(self, mask);
  if (values->dim() == 0) return npuIndex(values->unsqueeze(0), onlyIndex(where->unsqueeze(0)));
  return npuIndex(*values, onlyIndex(*where));
}

at::Tensor& maskedScatter(at::Tensor& self, const at::Tensor& mask, const at::Tensor& source) {
  TORCH_CHECK(mask.scalar_type() == at::kBool, "masked_scatter_ only supports boolean masks, but got mask with dtype ",
              mask.scalar_type(), "\n", opsErr(ErrCode::TYPE));
  TORCH_CHECK(self.scalar_type() == source.scalar_type(), "masked_scatter_: expected self and source to have same dtypes but got ",
              self.scalar_type(), " and ", source.scalar_type(), "\n", opsErr(ErrCode::TYPE));
  // contiguous: the pipeline refuses index_put with an expanded (stride-0) mask (ERR03007).
  at::Tensor where = mask.expand(self.sizes()).contiguous();
  const int64_t count = nonzeroCount(where);
  TORCH_CHECK(source.numel() >= count, "masked_scatter: expected source to have at least ", count,
              " elements (the True elements of mask), got ", source.numel(), "\n", opsErr(ErrCode::VALUE));
  if (count == 0) return self;
  at::Tensor values = source.reshape(-1).narrow(0, 0, count);
  if (self.dim() == 0) {
    at::Tensor view = self.unsqueeze(0);
    view.index_put_(onlyIndex(where.unsqueeze(0)), values);
    return self;
  }
  return self.index_put_(onlyIndex(where), values);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> npuUnique2(const at::Tensor& self, bool /*sorted*/, bool returnInverse,
                                                          bool returnCounts) {
  at::TensorOptions longs = self.options().dtype(at::kLong);
  const int64_t n = self.numel();
  at::Tensor noInverse = at::empty({0}, longs), noCounts = at::empty({0}, longs);
  if (n == 0) {
    return {at::empty({0}, self.options()), returnInverse ? at::empty(self.sizes(), longs) : noInverse,
            returnCounts ? at::empty({0}, longs) : noCounts};
  }
  // bool sorts as int32 (the simulated device has no uint8 kernels)
  at::Tensor flat = self.scalar_type() == at::kBool ? self.reshape(-1).to(at::kInt) : self.reshape(-1);
  auto [values, order] = at::sort(flat, /*stable=*/true, 0, /*descending=*/false);
  at::Tensor first = at::ones({n}, self.options().dtype(at::kBool));
  if (n > 1) first.narrow(0, 1, n - 1).copy_(values.narrow(0, 1, n - 1).ne(values.narrow(0, 0, n - 1)));
  at::Tensor unique = npuIndex(values, onlyIndex(first)).to(self.scalar_type());
  at::Tensor inverse = noInverse, counts = noCounts;
  if (returnInverse) {
    at::Tensor run = at::cumsum(first, 0).sub_(1);
    inverse = at::empty({n}, longs).scatter_(0, order, run).view(self.sizes());
  }
  if (returnCounts) {
    at::Tensor starts = npuNonzero(first).reshape(-1);
    at::Tensor ends = at::cat({starts.narrow(0, 1, starts.numel() - 1), at::full({1}, n, longs)});
    counts = ends.sub(starts);
  }
  return {unique, inverse, counts};
}

std::tuple<at::Tensor, at::Tensor> npuUnique(const at::Tensor& self, bool sorted, bool returnInverse) {
  auto [unique, inverse, counts] = npuUnique2(self, sorted, returnInverse, false);
  return {unique, inverse};
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("nonzero", TORCH_FN(npuNonzero));
  m.impl("index.Tensor", TORCH_FN(npuIndex));
  m.impl("masked_select", TORCH_FN(maskedSelect));
  m.impl("masked_scatter_", TORCH_FN(maskedScatter));
  m.impl("_unique", TORCH_FN(npuUnique));
  m.impl("_unique2", TORCH_FN(npuUnique2));
}

}  // namespace torch_npu::native
