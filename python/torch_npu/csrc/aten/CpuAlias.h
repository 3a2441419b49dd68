// Device memory is host memory: a CPU tensor can alias an NPU tensor's bytes with
// no copy. Kernels that compute on the host (the CPU fallback, copies with dtype
// conversion, fills, random ops) work on such aliases.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_npu {

// A CPU tensor over the whole storage of `npuTensor` (or of a CPU tensor) with its sizes, strides and
// offset, so views and in-place writes alias. Owns nothing: the caller keeps the
// NPU tensor alive and orders the access after the stream's pending work. Its
// storage is resizable with the CPU allocator, so an out= kernel that must grow
// it gets fresh CPU memory instead of failing (callers detect that and copy back).
at::Tensor cpuAlias(const at::Tensor& npuTensor);

// Same byte layout (dtype, sizes, strides) and dense: one memcpy copies it.
bool memcpyCompatible(const at::Tensor& a, const at::Tensor& b);

}  // namespace torch_npu
