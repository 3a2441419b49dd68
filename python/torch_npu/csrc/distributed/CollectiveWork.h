// The Work handle of one hccl or lccl operation.
//
// It completes when the transport (Gloo for hccl, peers' mapped memory for lccl) has finished
// with the tensors' device memory. The data is then in device memory already, so anything
// queued on any npu stream after wait() returns sees the result: wait() blocks the
// calling thread, not a stream.
#pragma once

#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <atomic>
#include <chrono>
#include <exception>
#include <string>
#include <vector>

namespace torch_npu::distributed {

class CollectiveWork : public c10d::Work {
 public:
  // `outputs` are the npu tensors the future resolves to; `timeout` bounds wait()
  // when the caller gives no timeout (the process group's timeout plus a grace period);
  // `backend` ("HCCL", "lccl") names the backend in the timeout message.
  CollectiveWork(std::string backend, int rank, c10d::OpType opType, std::vector<at::Tensor> outputs,
                 c10::Device device, std::chrono::milliseconds timeout);

  // Raises the operation's error; raises ERR02011 when it has not finished in time.
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  void synchronize() override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;
  std::vector<at::Tensor> result() override;

  // Called once by the process group when the transport is done (error == nullptr) or failed.
  void complete(std::exception_ptr error);
  // The rank a receive from any source got its message from (set before complete()).
  int sourceRank() const override;
  void setSourceRank(int rank) { sourceRank_ = rank; }

 private:
  std::string backend_;
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  std::chrono::milliseconds timeout_;
  std::atomic<int> sourceRank_{-1};
};

}  // namespace torch_npu::distributed
