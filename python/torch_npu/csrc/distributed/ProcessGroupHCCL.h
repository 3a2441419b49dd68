// ProcessGroupHCCL: the c10d backend behind init_process_group("hccl").
//
// Each operation is ordered after the work already queued on the caller's current
// npu stream (an event recorded there, waited for before the transport starts), then
// runs over a Gloo backend - built in Python and handed in, since the torch wheel
// ships no Gloo headers - on CPU views of the tensors' device memory (device memory
// is host memory on the simulated 910B), so contiguous tensors are never copied.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "torch_npu/csrc/distributed/FifoThread.h"

namespace torch_npu::distributed {

class ProcessGroupHCCL : public c10d::Backend {
 public:
  // `transport` is a ProcessGroupGloo over the same ranks; `device` is this rank's npu.
  ProcessGroupHCCL(c10::intrusive_ptr<c10d::Backend> transport, int rank, int size, c10::DeviceIndex device,
                   std::chrono::milliseconds timeout);
  ~ProcessGroupHCCL() override;

  const std::string getBackendName() const override { return "hccl"; }
  c10::DeviceIndex device() const { return device_; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  // Replaces the transport (reinit_process_group); waits for operations in flight first.
  void setTransport(c10::intrusive_ptr<c10d::Backend> transport);
  void setTimeout(std::chrono::milliseconds timeout) override;
  // Finishes the operations already queued, then stops accepting new ones.
  void shutdown() override;

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                     const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                 std::vector<at::Tensor>& inputs,
                                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs, const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                 std::vector<at::Tensor>& inputs,
                                                                 const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& outputSplitSizes,
                                               std::vector<int64_t>& inputSplitSizes,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;

 private:
  // Starts the Gloo operation on dense CPU tensors: `inputs` then `outputs` as listed
  // to enqueue(), in the same order.
  using TransportCall = std::function<c10::intrusive_ptr<c10d::Work>(
      c10d::Backend& transport, std::vector<at::Tensor>& inputs, std::vector<at::Tensor>& outputs)>;

  // Checks the tensors, orders the call after the current stream's queued work and
  // queues it; `outputs` are written by the operation (in-place tensors go there only).
  c10::intrusive_ptr<c10d::Work> enqueue(c10d::OpType opType, const std::vector<at::Tensor>& inputs,
                                         const std::vector<at::Tensor>& outputs, TransportCall call,
                                         const char* hcomName = nullptr);
  void checkTensors(const std::vector<at::Tensor>& tensors, const char* op) const;

  c10::intrusive_ptr<c10d::Backend> transport_;
  c10::DeviceIndex device_;
  std::chrono::milliseconds timeout_;
  // Declared last: destroyed first, so queued operations finish while the transport lives.
  std::unique_ptr<FifoThread> waiter_;
  std::unique_ptr<FifoThread> starter_;
};

}  // namespace torch_npu::distributed
