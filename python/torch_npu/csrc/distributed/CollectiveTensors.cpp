#include "torch_npu/csrc/distributed/CollectiveTensors.h"

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <algorithm>

#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/core/NpuFormat.h"

namespace torch_npu::distributed {
namespace {

// Collectives that move whole tensors or reduce element-wise; the others split or concatenate
// along dim 0, which means something else in an internal format's physical order.
bool layoutAgnostic(c10d::OpType type) {
  switch (type) {
    case c10d::OpType::BROADCAST:
    case c10d::OpType::ALLREDUCE:
    case c10d::OpType::ALLREDUCE_COALESCED:
    case c10d::OpType::REDUCE:
    case c10d::OpType::ALLGATHER:
    case c10d::OpType::GATHER:
    case c10d::OpType::SCATTER:
    case c10d::OpType::REDUCE_SCATTER:
    case c10d::OpType::SEND:
    case c10d::OpType::RECV:
    case c10d::OpType::RECVANYSOURCE:
      return true;
    default:
      return false;
  }
}

}  // namespace

at::Tensor hostView(const at::Tensor& t) {
  if (const NpuStorageDesc* desc = internalDesc(t)) {
    return at::from_blob(
        t.data_ptr(), desc->storageSizes, [keep = t](void*) {}, t.options().device(c10::kCPU));
  }
  return at::from_blob(
      t.data_ptr(), t.sizes(), t.strides(), [keep = t](void*) {}, t.options().device(c10::kCPU));
}

void checkFormats(const char* backend, c10d::OpType type, const std::vector<at::Tensor>& inputs,
                  const std::vector<at::Tensor>& outputs, const std::string& op) {
  std::vector<at::Tensor> all(inputs);
  all.insert(all.end(), outputs.begin(), outputs.end());
  if (all.empty() || std::none_of(all.begin(), all.end(), [](const at::Tensor& t) { return internalDesc(t); })) {
    return;
  }
  const std::string fix = ". Call torch_npu.npu_format_cast(t, 2) on the whole tensor and communicate the ND result\n";
  for (const at::Tensor& t : all) {
    const NpuStorageDesc* desc = internalDesc(t);
    if (desc == nullptr) continue;
    TORCH_CHECK(t.storage_offset() == 0 && isFormattedView(t, *desc), backend, " ", op,
                ": a tensor stored in internal format ", static_cast<int64_t>(desc->npuFormat),
                " with storage offset ", t.storage_offset(), " (a view of part of its storage) cannot be "
                "communicated", fix, errCode(SubModule::DIST, ErrCode::NOT_SUPPORT));
    TORCH_CHECK(layoutAgnostic(type), backend, " ", op, " splits or concatenates along dim 0, which tensors stored in "
                "internal format ", static_cast<int64_t>(desc->npuFormat), " do not keep in order", fix,
                errCode(SubModule::DIST, ErrCode::NOT_SUPPORT));
  }
  const AclFormat format = npuFormatOf(all.front());
  for (const at::Tensor& t : all) {
    bool sameSizes = type == c10d::OpType::ALLREDUCE_COALESCED || t.sizes() == all.front().sizes();
    TORCH_CHECK(npuFormatOf(t) == format && sameSizes, backend, " ", op,
                ": a collective on tensors stored in internal formats needs one format and one shape, got formats ",
                static_cast<int64_t>(format), " and ", static_cast<int64_t>(npuFormatOf(t)), fix,
                errCode(SubModule::DIST, ErrCode::NOT_SUPPORT));
  }
}

const char* collectiveRecordName(c10d::OpType type) {
  switch (type) {
    case c10d::OpType::BROADCAST: return "hcom_broadcast_";
    case c10d::OpType::ALLREDUCE:
    case c10d::OpType::ALLREDUCE_COALESCED: return "hcom_allReduce_";
    case c10d::OpType::REDUCE: return "hcom_reduce_";
    case c10d::OpType::ALLGATHER:
    case c10d::OpType::_ALLGATHER_BASE: return "hcom_allGather_";
    case c10d::OpType::GATHER: return "hcom_gather_";
    case c10d::OpType::SCATTER: return "hcom_scatter_";
    case c10d::OpType::REDUCE_SCATTER:
    case c10d::OpType::_REDUCE_SCATTER_BASE: return "hcom_reduceScatter_";
    case c10d::OpType::ALLTOALL_BASE: return "hcom_alltoallv_";
    case c10d::OpType::ALLTOALL: return "hcom_alltoall_";
    case c10d::OpType::SEND: return "hcom_send_";
    case c10d::OpType::RECV:
    case c10d::OpType::RECVANYSOURCE: return "hcom_receive_";
    case c10d::OpType::BARRIER: return "hcom_barrier_";
    default: return "hcom_collective_";
  }
}

uint64_t totalBytes(const std::vector<at::Tensor>& tensors) {
  uint64_t bytes = 0;
  for (const auto& t : tensors) bytes += t.nbytes();
  return bytes;
}

double premulFactor(const c10d::ReduceOp& op) {
  auto* supplement = dynamic_cast<const c10d::PreMulSumSupplement*>(op.supplement_.get());
  TORCH_CHECK(supplement != nullptr, "PREMUL_SUM without its factor: build the op with "
              "torch.distributed._make_nccl_premul_sum(factor)\n", errCode(SubModule::DIST, ErrCode::PARAM));
  if (!supplement->tensor_factor.defined()) return supplement->double_factor;
  const at::Tensor& f = supplement->tensor_factor;
  TORCH_CHECK(f.numel() == 1, "PREMUL_SUM: the factor tensor must hold one element, got ", f.numel(), "\n",
              errCode(SubModule::DIST, ErrCode::PARAM));
  // npu memory is host memory: the value is readable once the queued work has run.
  at::Tensor onHost = at::from_blob(f.data_ptr(), {1}, f.options().device(c10::kCPU));
  return onHost.to(at::kDouble).item<double>();
}

}  // namespace torch_npu::distributed
