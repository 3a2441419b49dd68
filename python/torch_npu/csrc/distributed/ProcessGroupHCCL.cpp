#include "torch_npu/csrc/distributed/ProcessGroupHCCL.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <future>
#include <utility>

#include "npurt/acl_rt.h"
#include "npurt/profiling.h"
#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/core/NpuStream.h"
#include "torch_npu/csrc/distributed/CollectiveTensors.h"
#include "torch_npu/csrc/distributed/CollectiveWork.h"

namespace torch_npu::distributed {
namespace {

// wait() without a timeout gives the transport its own timeout first, so its
// message (which names the peer) is the one users see.
constexpr std::chrono::milliseconds kWaitGrace{5000};

// The dense CPU tensor the transport works on: the view itself when contiguous,
// otherwise a contiguous copy written back to the view after the operation.
struct HostBuffer {
  at::Tensor view;
  at::Tensor dense;

  explicit HostBuffer(const at::Tensor& npuTensor)
      : view(hostView(npuTensor)), dense(view.is_contiguous() ? view : view.contiguous()) {}
  void writeBack() {
    if (!dense.is_same(view)) view.copy_(dense);
  }
};

std::exception_ptr distError(ErrCode code, const std::string& message) {
  try {
    C10_THROW_ERROR(DistBackendError, message + "\n" + errCode(SubModule::DIST, code));
  } catch (...) {
    return std::current_exception();
  }
}

std::string describe(const std::exception& e) {
  if (auto* err = dynamic_cast<const c10::Error*>(&e)) return err->what_without_backtrace();
  return e.what();
}

// Captures the work queued so far on the current stream of `device`.
aclrtEvent recordReadyEvent(c10::DeviceIndex device) {
  aclrtStream stream = nativeStream(getCurrentStream(device));
  aclrtEvent event = nullptr;
  NPU_CHECK_ACL(aclrtCreateEventWithFlag(&event, ACL_EVENT_SYNC));
  if (aclrtRecordEvent(event, stream) != ACL_SUCCESS) {
    std::string message = aclGetRecentErrMsg();
    aclrtDestroyEvent(event);
    TORCH_CHECK(false, "recording the collective's ready event failed: ", message, "\n",
                errCode(SubModule::DIST, ErrCode::ACL));
  }
  return event;
}

void waitAndDestroy(aclrtEvent event) {
  aclError waited = aclrtSynchronizeEvent(event);
  aclrtDestroyEvent(event);
  TORCH_CHECK(waited == ACL_SUCCESS, "waiting for the npu work queued before the collective failed: ",
              aclGetRecentErrMsg(), "\n", errCode(SubModule::DIST, ErrCode::ACL));
}

// Gloo has no PREMUL_SUM: `tensors` (the host buffers the transport reduces in place) are
// multiplied by the factor first, and the transport sums them.
template <typename Options>
Options premulApplied(Options opts, std::vector<at::Tensor>& tensors) {
  if (opts.reduceOp != c10d::ReduceOp::PREMUL_SUM) return opts;
  const double factor = premulFactor(opts.reduceOp);
  for (at::Tensor& t : tensors) t.mul_(factor);
  opts.reduceOp = c10d::ReduceOp(c10d::ReduceOp::SUM);
  return opts;
}

std::vector<at::Tensor> denseOf(std::vector<HostBuffer>& buffers) {
  std::vector<at::Tensor> dense;
  dense.reserve(buffers.size());
  for (auto& b : buffers) dense.push_back(b.dense);
  return dense;
}

}  // namespace

ProcessGroupHCCL::ProcessGroupHCCL(c10::intrusive_ptr<c10d::Backend> transport, int rank, int size,
                                   c10::DeviceIndex device, std::chrono::milliseconds timeout)
    : c10d::Backend(rank, size),
      transport_(std::move(transport)),
      device_(device),
      timeout_(timeout),
      waiter_(std::make_unique<FifoThread>()),
      starter_(std::make_unique<FifoThread>()) {
  TORCH_CHECK(transport_, "ProcessGroupHCCL needs a transport backend (a ProcessGroupGloo)\n",
              errCode(SubModule::DIST, ErrCode::PARAM));
}

ProcessGroupHCCL::~ProcessGroupHCCL() { shutdown(); }

void ProcessGroupHCCL::shutdown() {
  starter_.reset();  // lets every started operation reach the waiter
  waiter_.reset();
}

void ProcessGroupHCCL::setTransport(c10::intrusive_ptr<c10d::Backend> transport) {
  TORCH_CHECK(starter_, "the hccl process group was shut down\n", errCode(SubModule::DIST, ErrCode::UNAVAIL));
  std::promise<void> swapped;
  starter_->post([&] {
    transport_ = std::move(transport);
    swapped.set_value();
  });
  swapped.get_future().wait();
}

void ProcessGroupHCCL::setTimeout(std::chrono::milliseconds timeout) {
  timeout_ = timeout;
  transport_->setTimeout(timeout);
}

void ProcessGroupHCCL::checkTensors(const std::vector<at::Tensor>& tensors, const char* op) const {
  for (const auto& t : tensors) {
    TORCH_CHECK(t.defined(), "hccl ", op, ": got an undefined tensor\n", errCode(SubModule::DIST, ErrCode::PARAM));
    TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, "hccl ", op, ": expected npu tensors, got a ",
                t.device(), " tensor. Move it with .npu(), or give CPU tensors their own backend: ",
                "init_process_group('cpu:gloo,npu:hccl')\n", errCode(SubModule::DIST, ErrCode::PARAM));
    TORCH_CHECK(t.device().index() == device_, "hccl ", op, ": tensor is on ", t.device(), " but rank ", rank_,
                " communicates on npu:", static_cast<int>(device_),
                ". Each rank uses npu:LOCAL_RANK: call torch.npu.set_device(local_rank) before creating tensors\n",
                errCode(SubModule::DIST, ErrCode::VALUE));
    TORCH_CHECK(t.layout() == c10::kStrided, "hccl ", op, ": only dense tensors are supported, got layout ",
                t.layout(), "\n", errCode(SubModule::DIST, ErrCode::NOT_SUPPORT));
  }
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::enqueue(c10d::OpType opType, const std::vector<at::Tensor>& inputs,
                                                         const std::vector<at::Tensor>& outputs, TransportCall call,
                                                         const char* hcom) {
  const std::string op = c10d::opTypeToString(opType);
  checkTensors(inputs, op.c_str());
  checkTensors(outputs, op.c_str());
  checkFormats("hccl", opType, inputs, outputs, op);
  TORCH_CHECK(starter_, "hccl ", op, ": the process group was shut down\n",
              errCode(SubModule::DIST, ErrCode::UNAVAIL));
  auto work = c10::make_intrusive<CollectiveWork>("HCCL", rank_, opType, outputs, c10::Device(c10::DeviceType::PrivateUse1, device_),
                                            timeout_ + kWaitGrace);
  aclrtEvent ready = recordReadyEvent(device_);
  // A device record on the current stream's lane, linked to the host op queuing it (null while
  // the profiler is off): from the transport's start to the end of the wait for it.
  npurtProfiledTask* profiled =
      npurtProfilerBeginTask(NPURT_TASK_COLLECTIVE, hcom != nullptr ? hcom : collectiveRecordName(opType),
                             nativeStream(getCurrentStream(device_)), totalBytes(inputs.empty() ? outputs : inputs), -1);
  starter_->post([this, work, ready, profiled, inputs, outputs, call = std::move(call), op, opType] {
    std::vector<HostBuffer> in, out;
    c10::intrusive_ptr<c10d::Work> started;
    try {
      waitAndDestroy(ready);
      npurtProfilerTaskStarted(profiled);
      for (const auto& t : inputs) in.emplace_back(t);
      for (const auto& t : outputs) out.emplace_back(t);
      auto denseIn = denseOf(in);
      auto denseOut = denseOf(out);
      started = call(*transport_, denseIn, denseOut);
    } catch (const std::exception& e) {
      work->complete(distError(ErrCode::PARAM, "hccl " + op + " on rank " + std::to_string(rank_) +
                                                   " could not start: " + describe(e)));
      npurtProfilerTaskEnded(profiled, ACL_ERROR_RT_INTERNAL_ERROR);
      return;
    }
    // The buffers ride along until the transport is done with them: they keep the npu tensors alive.
    waiter_->post([this, work, started, profiled, in = std::move(in), out = std::move(out), op, opType]() mutable {
      try {
        started->wait();
        if (opType == c10d::OpType::RECVANYSOURCE) work->setSourceRank(started->sourceRank());
        for (auto& b : out) b.writeBack();
        npurtProfilerTaskEnded(profiled, ACL_SUCCESS);
        work->complete(nullptr);
      } catch (const std::exception& e) {
        npurtProfilerTaskEnded(profiled, ACL_ERROR_RT_INTERNAL_ERROR);
        work->complete(distError(
            ErrCode::TIMEOUT,
            "hccl " + op + " on rank " + std::to_string(rank_) + " failed: " + describe(e) +
                "\nA peer rank died or did not reach this collective within the process group timeout (" +
                std::to_string(timeout_.count()) + " ms). Check that every rank is alive and issues the same " +
                "collectives in the same order, then destroy the process group (or call " +
                "torch_npu.distributed.reinit_process_group) before communicating again."));
      }
    });
  });
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::broadcast(std::vector<at::Tensor>& tensors,
                                                           const c10d::BroadcastOptions& opts) {
  return enqueue(c10d::OpType::BROADCAST, {}, tensors,
                 [opts](c10d::Backend& t, auto&, auto& out) { return t.broadcast(out, opts); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::allreduce(std::vector<at::Tensor>& tensors,
                                                           const c10d::AllreduceOptions& opts) {
  return enqueue(c10d::OpType::ALLREDUCE, {}, tensors, [opts](c10d::Backend& t, auto&, auto& out) {
    return t.allreduce(out, premulApplied(opts, out));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                     const c10d::AllreduceCoalescedOptions& opts) {
  return enqueue(c10d::OpType::ALLREDUCE_COALESCED, {}, tensors, [opts](c10d::Backend& t, auto&, auto& out) {
    return t.allreduce_coalesced(out, premulApplied(opts, out));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::reduce(std::vector<at::Tensor>& tensors,
                                                        const c10d::ReduceOptions& opts) {
  return enqueue(c10d::OpType::REDUCE, {}, tensors,
                 [opts](c10d::Backend& t, auto&, auto& out) { return t.reduce(out, opts); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                           std::vector<at::Tensor>& inputs,
                                                           const c10d::AllgatherOptions& opts) {
  TORCH_CHECK(outputs.size() == 1 && inputs.size() == 1, "hccl allgather takes one input tensor and one output list\n",
              errCode(SubModule::DIST, ErrCode::PARAM));
  return enqueue(c10d::OpType::ALLGATHER, inputs, outputs[0], [opts](c10d::Backend& t, auto& in, auto& out) {
    std::vector<std::vector<at::Tensor>> nested{out};
    return t.allgather(nested, in, opts);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                 const c10d::AllgatherOptions& opts) {
  return enqueue(c10d::OpType::_ALLGATHER_BASE, {input}, {output},
                 [opts](c10d::Backend& t, auto& in, auto& out) { return t._allgather_base(out[0], in[0], opts); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                                 std::vector<at::Tensor>& inputs,
                                                                                 const c10d::AllgatherOptions& opts) {
  return enqueue(
      c10d::OpType::COALESCED, inputs, outputs,
      [opts](c10d::Backend& t, auto& in, auto& out) { return t.allgather_into_tensor_coalesced(out, in, opts); },
      "hcom_allGather_");
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                        std::vector<at::Tensor>& inputs,
                                                        const c10d::GatherOptions& opts) {
  // Only the root passes an output list.
  const bool root = !outputs.empty();
  return enqueue(c10d::OpType::GATHER, inputs, root ? outputs[0] : std::vector<at::Tensor>{},
                 [opts, root](c10d::Backend& t, auto& in, auto& out) {
                   std::vector<std::vector<at::Tensor>> nested;
                   if (root) nested.push_back(out);
                   return t.gather(nested, in, opts);
                 });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::scatter(std::vector<at::Tensor>& outputs,
                                                         std::vector<std::vector<at::Tensor>>& inputs,
                                                         const c10d::ScatterOptions& opts) {
  // Only the root passes an input list.
  const bool root = !inputs.empty();
  return enqueue(c10d::OpType::SCATTER, root ? inputs[0] : std::vector<at::Tensor>{}, outputs,
                 [opts, root](c10d::Backend& t, auto& in, auto& out) {
                   std::vector<std::vector<at::Tensor>> nested;
                   if (root) nested.push_back(in);
                   return t.scatter(out, nested, opts);
                 });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                                const c10d::ReduceScatterOptions& opts) {
  TORCH_CHECK(outputs.size() == 1 && inputs.size() == 1,
              "hccl reduce_scatter takes one output tensor and one input list\n",
              errCode(SubModule::DIST, ErrCode::PARAM));
  return enqueue(c10d::OpType::REDUCE_SCATTER, inputs[0], outputs, [opts](c10d::Backend& t, auto& in, auto& out) {
    std::vector<std::vector<at::Tensor>> nested{in};
    return t.reduce_scatter(out, nested, opts);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                      const c10d::ReduceScatterOptions& opts) {
  return enqueue(c10d::OpType::_REDUCE_SCATTER_BASE, {input}, {output},
                 [opts](c10d::Backend& t, auto& in, auto& out) {
                   if (opts.reduceOp != c10d::ReduceOp::PREMUL_SUM) return t._reduce_scatter_base(out[0], in[0], opts);
                   std::vector<at::Tensor> scaled{in[0].clone()};  // the input stays as the caller wrote it
                   return t._reduce_scatter_base(out[0], scaled[0], premulApplied(opts, scaled));
                 });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs, const c10d::ReduceScatterOptions& opts) {
  return enqueue(
      c10d::OpType::COALESCED, inputs, outputs,
      [opts](c10d::Backend& t, auto& in, auto& out) { return t.reduce_scatter_tensor_coalesced(out, in, opts); },
      "hcom_reduceScatter_");
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                               std::vector<int64_t>& outputSplitSizes,
                                                               std::vector<int64_t>& inputSplitSizes,
                                                               const c10d::AllToAllOptions& opts) {
  return enqueue(c10d::OpType::ALLTOALL_BASE, {input}, {output},
                 [opts, outputSplitSizes, inputSplitSizes](c10d::Backend& t, auto& in, auto& out) mutable {
                   return t.alltoall_base(out[0], in[0], outputSplitSizes, inputSplitSizes, opts);
                 });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::alltoall(std::vector<at::Tensor>& outputs,
                                                          std::vector<at::Tensor>& inputs,
                                                          const c10d::AllToAllOptions& opts) {
  return enqueue(c10d::OpType::ALLTOALL, inputs, outputs,
                 [opts](c10d::Backend& t, auto& in, auto& out) { return t.alltoall(out, in, opts); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::send(std::vector<at::Tensor>& tensors, int dstRank, int tag) {
  return enqueue(c10d::OpType::SEND, tensors, {},
                 [dstRank, tag](c10d::Backend& t, auto& in, auto&) { return t.send(in, dstRank, tag); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::recv(std::vector<at::Tensor>& tensors, int srcRank, int tag) {
  return enqueue(c10d::OpType::RECV, {}, tensors,
                 [srcRank, tag](c10d::Backend& t, auto&, auto& out) { return t.recv(out, srcRank, tag); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::recvAnysource(std::vector<at::Tensor>& tensors, int tag) {
  return enqueue(c10d::OpType::RECVANYSOURCE, {}, tensors,
                 [tag](c10d::Backend& t, auto&, auto& out) { return t.recvAnysource(out, tag); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHCCL::barrier(const c10d::BarrierOptions& opts) {
  // No tensors, but still ordered after the current stream: a barrier means "my queued work is done".
  return enqueue(c10d::OpType::BARRIER, {}, {},
                 [opts](c10d::Backend& t, auto&, auto&) { return t.barrier(opts); });
}

}  // namespace torch_npu::distributed
