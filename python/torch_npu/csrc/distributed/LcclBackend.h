// ProcessGroupLCCL: the c10d backend behind init_process_group("lccl"), for ranks on one host.
//
// As ProcessGroupHCCL, each operation is ordered after the work queued on the caller's
// current npu stream (an event waited for before it starts) and completes a Work the
// caller waits on. The data never leaves device memory: ranks read each other's
// tensors through shared segments (LcclTransport.h) - all_reduce as a reduce-scatter
// and an all-gather in one pass, every rank reducing its slice of every peer's tensor and
// writing the result back into each; the other collectives as direct copies from the
// peers' tensors.
//
// Two threads per group, as hccl's: the starter waits for the ready event and publishes
// the rank's buffers (never waiting for a peer, so sends listed after receives still go
// out); the finisher runs the operations in order - barrier, copies/reductions, barrier.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "torch_npu/csrc/distributed/CollectiveWork.h"
#include "torch_npu/csrc/distributed/FifoThread.h"
#include "torch_npu/csrc/distributed/LcclTransport.h"

namespace torch_npu::distributed {

class ProcessGroupLCCL : public c10d::Backend {
 public:
  ProcessGroupLCCL(int rank, int size, c10::DeviceIndex device, std::chrono::milliseconds timeout);
  ~ProcessGroupLCCL() override;

  const std::string getBackendName() const override { return "lccl"; }
  c10::DeviceIndex device() const { return device_; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  std::string localDescriptor() const { return transport_->localDescriptor(); }
  void connect(const std::vector<std::string>& descriptors) { transport_->connect(descriptors); }
  void setTimeout(std::chrono::milliseconds timeout) override { timeout_ = timeout; }
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

  // One operation, as the two threads see it: `published` are the dense buffers the
  // starter publishes; `finish` runs on the finisher with the operation's deadline.
  struct Op;

 private:
  c10::intrusive_ptr<c10d::Work> enqueue(c10d::OpType type, std::vector<at::Tensor> published,
                                         std::vector<at::Tensor> outputs, bool collective,
                                         std::function<void(Op&)> start, std::function<void(Op&)> finish);

  std::unique_ptr<lccl::Transport> transport_;
  c10::DeviceIndex device_;
  std::chrono::milliseconds timeout_;
  uint64_t nextSeq_ = 0;  // collectives issued (caller thread)
  std::mutex flightMutex_;
  std::condition_variable flightCv_;
  uint64_t finishedSeq_ = 0;  // collectives the finisher is done with
  std::atomic<bool> broken_{false};
  std::string brokenReason_;
  // Declared last: destroyed first, so queued operations finish while the transport lives.
  std::unique_ptr<FifoThread> finisher_;
  std::unique_ptr<FifoThread> starter_;
};

}  // namespace torch_npu::distributed
