#include "torch_npu/csrc/distributed/CollectiveWork.h"

#include <ATen/core/jit_type.h>

#include <utility>

#include "torch_npu/csrc/NpuError.h"

namespace torch_npu::distributed {

CollectiveWork::CollectiveWork(std::string backend, int rank, c10d::OpType opType, std::vector<at::Tensor> outputs,
                               c10::Device device, std::chrono::milliseconds timeout)
    : c10d::Work(rank, opType),
      backend_(std::move(backend)),
      outputs_(std::move(outputs)),
      future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()),
                                                       std::vector<c10::Device>{device})),
      timeout_(timeout) {}

bool CollectiveWork::wait(std::chrono::milliseconds timeout) {
  const auto limit = timeout == kNoTimeout ? timeout_ : timeout;
  std::unique_lock<std::mutex> lock(mutex_);
  const bool finished = cv_.wait_for(lock, limit, [this] { return completed_; });
  if (!finished) {
    C10_THROW_ERROR(DistBackendError,
                    c10::str(backend_, " ", c10d::opTypeToString(opType_), " on rank ", rank_, " did not finish within ",
                             limit.count(), " ms: a peer rank died or never reached this collective. Check that ",
                             "every rank is alive and issues the same collectives in the same order; pass a larger ",
                             "timeout= to init_process_group if ranks are only slow.\n",
                             errCode(SubModule::DIST, ErrCode::TIMEOUT)));
  }
  if (exception_) std::rethrow_exception(exception_);
  return true;
}

// The result is in device memory before completion is signalled: nothing to order.
void CollectiveWork::synchronize() {}

c10::intrusive_ptr<c10::ivalue::Future> CollectiveWork::getFuture() { return future_; }

std::vector<at::Tensor> CollectiveWork::result() { return outputs_; }

int CollectiveWork::sourceRank() const {
  int rank = sourceRank_.load();
  TORCH_CHECK(rank >= 0, backend_, " ", c10d::opTypeToString(opType_), ": only a finished receive from any source ",
              "has a source rank\n", errCode(SubModule::DIST, ErrCode::UNAVAIL));
  return rank;
}

void CollectiveWork::complete(std::exception_ptr error) {
  finish(error);
  if (error) {
    future_->setError(error);
  } else {
    future_->markCompleted(c10::IValue(outputs_));
  }
}

}  // namespace torch_npu::distributed
