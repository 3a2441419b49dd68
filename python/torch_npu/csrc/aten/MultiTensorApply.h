// Multi-tensor launches: one elementwise op applied to every tensor of a list in ONE kernel launch
// per dtype group, as torch.cuda's multi_tensor_apply does (the foreach ops, torch.optim's fused
// steps).
//
// The per-tensor op is compiled by the ascend pipeline for 1-d chunks of kChunkElements (and once
// per distinct tail length), exactly as a dispatched call of it on a chunk would be (same cache,
// same records). A group's launch runs a table kernel: its argument is a table of work items, each
// the chunk kernel's function, its block index and the ABI slots of one chunk (the chunk's data
// pointers and that tensor's scalar parameters); the launch's blocks split the table. So a step over
// 200 tensors costs one runtime launch per op and dtype, not 200, and kernels compile per chunk
// length, not per parameter shape.
//
// The table walk itself is host code, not pipeline output, and has no AscendC form. A 910B kernel cannot
// call another kernel through a pointer, so its form would be a different kernel: the chunk kernel's body
// compiled once with every GM address read per work item from a table in GM (AscendC's
// multi-tensor-apply pattern). That needs a table-argument kernel signature in the pipeline's emitters
// (AscendC, ACL host calls, the sim ABI), which do not have one; what each record carries for real
// hardware is the chunk kernel's AscendC and ACL source, i.e. one ACL launch per chunk.
//
// A chunk whose record is several launches (intermediates between them) runs them in order as one
// work item. A tensor that cannot be flattened (non-contiguous, internal format, a shape differing
// from its list's first tensor), a record whose results are not all written by its last launch, or
// a result whose dtype is not its target's, runs through the per-tensor op instead (the
// dispatcher's usual path).
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <string>
#include <vector>

namespace torch_npu::native {

inline constexpr int64_t kChunkElements = 65536;

// One argument of the per-tensor op, in its schema order.
struct MultiTensorArg {
  enum class Kind {
    Chunked,       // element i of `list`, flattened and cut into chunks with the other chunked lists
    PerTensor,     // element i of `list`, whole (a per-tensor step count)
    Shared,        // `value` (a tensor every item reads whole, e.g. found_inf, or a number)
    SharedChunk,   // `value`, a 1-d tensor of at least kChunkElements: every chunk reads its first elements
                   // (a per-tensor call gets a fresh tensor of that dtype filled with its first element)
    PerTensorValue // element i of `values` (a ScalarList)
  } kind = Kind::Shared;
  std::vector<at::Tensor> list;
  c10::IValue value;
  std::vector<c10::IValue> values;

  static MultiTensorArg chunked(at::TensorList tensors) { return {Kind::Chunked, tensors.vec(), {}, {}}; }
  static MultiTensorArg perTensor(at::TensorList tensors) { return {Kind::PerTensor, tensors.vec(), {}, {}}; }
  static MultiTensorArg shared(c10::IValue v) { return {Kind::Shared, {}, std::move(v), {}}; }
  static MultiTensorArg sharedChunk(const at::Tensor& t) { return {Kind::SharedChunk, {}, t, {}}; }
  static MultiTensorArg perTensorValues(std::vector<c10::IValue> vs) {
    return {Kind::PerTensorValue, {}, {}, std::move(vs)};
  }
};

// Applies `perTensorOp` ("aten::add_.Tensor", "npu::_npu_fused_adam_tensor_step") to every item i.
// `writes[k]` is the index in `args` of the Chunked list result k is written into, or -1 for a fresh
// tensor (shaped as the first chunked list's element); an empty `writes` takes the op's own in-place
// targets. A result the per-tensor op returns empty (zero elements) is dropped: no kernel writes it, and
// its `writes` entry must be -1. The op must be elementwise over the chunked lists (element j of each result reads
// element j of each chunked input, and the shared / per-tensor tensors): `elementwise` says so for
// ops without torch's pointwise tag. Returns the fresh results, [item][result] (empty tensors for
// results that were written into arguments). `launchedBy` names the op whose counters count the
// launches (torch.npu.eager_stats()).
std::vector<std::vector<at::Tensor>> multiTensorApply(const std::string& launchedBy, const std::string& perTensorOp,
                                                      const std::vector<MultiTensorArg>& args,
                                                      const std::vector<int>& writes, bool elementwise);

}  // namespace torch_npu::native
