// Facts about the tensors of one collective that hccl and lccl share: how an npu tensor is
// seen on the host (internal formats as their physical storage, as HCCL communicates them),
// which calls such tensors may take part in, and how the operation is named in profiles.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace torch_npu::distributed {

// A CPU tensor over the npu tensor's memory; the deleter keeps the npu tensor alive. An
// internal-format tensor is its physical storage (contiguous): element-wise reductions and
// whole-tensor moves give the same bytes as on the logical values.
at::Tensor hostView(const at::Tensor& t);

// Internal-format tensors take part only whole (no storage offset, as torch_npu requires), in a
// collective that moves whole tensors or reduces element-wise, and with every other tensor of
// the call in the same format. `backend` ("hccl", "lccl") and `op` name the call in the error.
void checkFormats(const char* backend, c10d::OpType type, const std::vector<at::Tensor>& inputs,
                  const std::vector<at::Tensor>& outputs, const std::string& op);

// The operation's name in torch_npu's profiles (CANN's HCCL op types, e.g. "hcom_allReduce_").
const char* collectiveRecordName(c10d::OpType type);
uint64_t totalBytes(const std::vector<at::Tensor>& tensors);

// PREMUL_SUM's factor as this rank passed it (a double, or a one-element tensor read on the
// host: call it once the work queued before the collective has run).
double premulFactor(const c10d::ReduceOp& op);

}  // namespace torch_npu::distributed
