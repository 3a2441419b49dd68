#include "torch_npu/csrc/distributed/LcclBackend.h"

#include <ATen/ATen.h>
#include <ATen/core/jit_type.h>
#include <c10/core/InferenceMode.h>
#include <pybind11/chrono.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "npurt/acl_rt.h"
#include "npurt/profiling.h"
#include "torch_npu/csrc/NpuError.h"
#include "torch_npu/csrc/PyBindRegistry.h"
#include "torch_npu/csrc/core/NpuFormat.h"
#include "torch_npu/csrc/core/NpuStream.h"
#include "torch_npu/csrc/distributed/CollectiveTensors.h"

namespace torch_npu::distributed {

struct ProcessGroupLCCL::Op {
  c10d::OpType type;
  std::string name;  // "lccl allreduce on rank 0", for messages
  uint64_t seq = 0;
  int rank = 0;
  int size = 0;
  lccl::Transport* transport = nullptr;
  std::vector<at::Tensor> published;  // dense
  std::vector<at::Tensor> outputs;    // dense; written back to `targets` when they differ
  std::vector<at::Tensor> targets;
  lccl::Clock::time_point deadline;
  uint32_t message = 0;  // a send's message number
  int source = -1;       // the rank a receive from any source got its message from

  // Buffer `index` that `peer` published, viewed on the host with `like`'s dtype and size.
  at::Tensor peer(int peer, int index, const at::Tensor& like) const {
    lccl::LocalBuffer b = transport->buffer(peer, seq, index);
    TORCH_CHECK(b.size == like.nbytes(), name, ": rank ", peer, " passed a tensor of ", b.size, " bytes where rank ",
                rank, " expects ", like.nbytes(), ": every rank must pass tensors of the same shapes and dtypes\n",
                errCode(SubModule::DIST, ErrCode::PARAM));
    return at::from_blob(b.ptr, {like.numel()}, like.options().device(c10::kCPU));
  }
  void barrier() const { transport->barrier(name, deadline); }
};

namespace {

using Op = ProcessGroupLCCL::Op;

// A flat host view of a dense npu tensor (device memory is host memory).
at::Tensor host(const at::Tensor& t) {
  return at::from_blob(t.data_ptr(), {t.numel()}, t.options().device(c10::kCPU));
}

void copyBytes(const at::Tensor& dst, const at::Tensor& src) {
  if (dst.nbytes() > 0) std::memcpy(dst.data_ptr(), src.data_ptr(), dst.nbytes());
}

// acc op= each of `others`, element-wise (AVG: the mean over acc and others; PREMUL_SUM: the
// sum times this rank's factor, which every rank passes alike).
void reduceInto(at::Tensor acc, const std::vector<at::Tensor>& others, const c10d::ReduceOp& op) {
  for (const at::Tensor& x : others) {
    switch (op) {
      case c10d::ReduceOp::SUM:
      case c10d::ReduceOp::AVG:
      case c10d::ReduceOp::PREMUL_SUM: acc.add_(x); break;
      case c10d::ReduceOp::PRODUCT: acc.mul_(x); break;
      case c10d::ReduceOp::MIN: at::minimum_out(acc, acc, x); break;
      case c10d::ReduceOp::MAX: at::maximum_out(acc, acc, x); break;
      case c10d::ReduceOp::BAND: acc.bitwise_and_(x); break;
      case c10d::ReduceOp::BOR: acc.bitwise_or_(x); break;
      case c10d::ReduceOp::BXOR: acc.bitwise_xor_(x); break;
      default: TORCH_CHECK(false, "unsupported reduce op");
    }
  }
  if (op == c10d::ReduceOp::AVG) acc.div_(static_cast<int64_t>(others.size() + 1));
  if (op == c10d::ReduceOp::PREMUL_SUM) acc.mul_(premulFactor(op));
}

void checkReduceOp(const c10d::ReduceOp& op, const std::vector<at::Tensor>& tensors, const char* name) {
  bool supported = op == c10d::ReduceOp::SUM || op == c10d::ReduceOp::AVG || op == c10d::ReduceOp::PRODUCT ||
                   op == c10d::ReduceOp::MIN || op == c10d::ReduceOp::MAX || op == c10d::ReduceOp::BAND ||
                   op == c10d::ReduceOp::BOR || op == c10d::ReduceOp::BXOR || op == c10d::ReduceOp::PREMUL_SUM;
  TORCH_CHECK(supported, "lccl ", name, ": reduce op ", static_cast<int>(op.op_),
              " is not supported (SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR, PREMUL_SUM are)\n",
              errCode(SubModule::DIST, ErrCode::NOT_SUPPORT));
  for (const at::Tensor& t : tensors) {
    bool scales = op == c10d::ReduceOp::AVG || op == c10d::ReduceOp::PREMUL_SUM;
    TORCH_CHECK(!scales || at::isFloatingType(t.scalar_type()), "lccl ", name,
                ": AVG and PREMUL_SUM need a floating-point tensor, got ", t.scalar_type(), "\n",
                errCode(SubModule::DIST, ErrCode::PARAM));
  }
}

// Elements of one block of the all_reduce: the block is reduced, then copied to the peers while
// it is still in this core's cache (256 KiB of float32).
constexpr int64_t kReduceBlockBytes = 256 << 10;

// Reduce-scatter and all-gather in one pass: rank r owns slice r of every rank's tensor. Block
// by block it reduces its slice of all tensors into its own and writes the result into each
// peer's slice r. No other rank reads or writes slice r, so two barriers order it all: every
// rank's input is ready before, every slice is written everywhere after.
void allreduceTensors(const Op& op, const c10d::ReduceOp& reduceOp) {
  op.barrier();
  for (size_t i = 0; i < op.published.size(); ++i) {
    const at::Tensor& t = op.published[i];
    int64_t chunk = (t.numel() + op.size - 1) / op.size;
    int64_t begin = std::min(t.numel(), chunk * op.rank), end = std::min(t.numel(), begin + chunk);
    if (end <= begin) continue;
    at::Tensor mine = host(t).slice(0, begin, end);
    std::vector<at::Tensor> peers;
    for (int q = 0; q < op.size; ++q) {
      if (q != op.rank) peers.push_back(op.peer(q, static_cast<int>(i), t).slice(0, begin, end));
    }
    int64_t block = std::max<int64_t>(1, kReduceBlockBytes / static_cast<int64_t>(t.element_size()));
    std::vector<at::Tensor> theirs(peers.size());
    for (int64_t b = 0; b < end - begin; b += block) {
      int64_t len = std::min(block, end - begin - b);
      at::Tensor acc = mine.slice(0, b, b + len);
      for (size_t p = 0; p < peers.size(); ++p) theirs[p] = peers[p].slice(0, b, b + len);
      reduceInto(acc, theirs, reduceOp);
      for (const at::Tensor& peer : theirs) copyBytes(peer, acc);
    }
  }
  op.barrier();
}

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

constexpr std::chrono::milliseconds kWaitGrace{5000};

}  // namespace

ProcessGroupLCCL::ProcessGroupLCCL(int rank, int size, c10::DeviceIndex device, std::chrono::milliseconds timeout)
    : c10d::Backend(rank, size),
      transport_(std::make_unique<lccl::Transport>(rank, size, device)),
      device_(device),
      timeout_(timeout),
      finisher_(std::make_unique<FifoThread>()),
      starter_(std::make_unique<FifoThread>()) {}

ProcessGroupLCCL::~ProcessGroupLCCL() { shutdown(); }

void ProcessGroupLCCL::shutdown() {
  starter_.reset();
  finisher_.reset();
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLCCL::enqueue(c10d::OpType type, std::vector<at::Tensor> published,
                                                         std::vector<at::Tensor> outputs, bool collective,
                                                         std::function<void(Op&)> start,
                                                         std::function<void(Op&)> finish) {
  auto op = std::make_shared<Op>();
  op->type = type;
  op->name = "lccl " + c10d::opTypeToString(type) + " on rank " + std::to_string(rank_);
  op->rank = rank_;
  op->size = size_;
  op->transport = transport_.get();
  TORCH_CHECK(starter_, op->name, ": the process group was shut down\n", errCode(SubModule::DIST, ErrCode::UNAVAIL));
  TORCH_CHECK(!broken_, op->name, ": the process group failed earlier (", brokenReason_,
              "); destroy it and create a new one before communicating again\n",
              errCode(SubModule::DIST, ErrCode::UNAVAIL));
  auto check = [&](const at::Tensor& t) {
    TORCH_CHECK(t.defined(), op->name, ": got an undefined tensor\n", errCode(SubModule::DIST, ErrCode::PARAM));
    TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, op->name, ": expected npu tensors, got a ",
                t.device(), " tensor. Move it with .npu(), or give CPU tensors their own backend: ",
                "init_process_group('cpu:gloo,npu:lccl')\n", errCode(SubModule::DIST, ErrCode::PARAM));
    TORCH_CHECK(t.device().index() == device_, op->name, ": tensor is on ", t.device(), " but this rank communicates ",
                "on npu:", static_cast<int>(device_), ". Call torch.npu.set_device(local_rank) first\n",
                errCode(SubModule::DIST, ErrCode::VALUE));
    TORCH_CHECK(t.layout() == c10::kStrided, op->name, ": only dense tensors are supported\n",
                errCode(SubModule::DIST, ErrCode::NOT_SUPPORT));
  };
  for (const at::Tensor& t : published) check(t);
  for (const at::Tensor& t : outputs) check(t);
  checkFormats("lccl", type, published, outputs, c10d::opTypeToString(type));
  const std::vector<at::Tensor> userOutputs = outputs;
  // Internal-format tensors travel as their physical storage (a host view of it, as hccl).
  for (auto* list : {&published, &outputs}) {
    for (at::Tensor& t : *list) {
      if (internalDesc(t) != nullptr) t = hostView(t);
    }
  }
  // Non-contiguous tensors travel as contiguous copies (queued on the current stream, so
  // the ready event covers them); outputs are written back when the operation is done.
  for (at::Tensor& t : published) {
    at::Tensor dense = t.is_contiguous() ? t : t.contiguous();
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i].is_same(t)) op->targets.push_back(t), op->outputs.push_back(dense);
    }
    t = dense;
  }
  for (const at::Tensor& t : outputs) {
    bool seen = false;
    for (const at::Tensor& target : op->targets) seen = seen || target.is_same(t);
    if (!seen) op->targets.push_back(t), op->outputs.push_back(t.is_contiguous() ? t : at::empty_like(t, at::MemoryFormat::Contiguous));
  }
  op->published = std::move(published);
  if (collective) op->seq = nextSeq_++;
  auto work = c10::make_intrusive<CollectiveWork>("lccl", rank_, type, userOutputs,
                                                  c10::Device(c10::DeviceType::PrivateUse1, device_), timeout_ + kWaitGrace);
  aclrtEvent ready = nullptr;
  NPU_CHECK_ACL(aclrtCreateEventWithFlag(&ready, ACL_EVENT_SYNC));
  NPU_CHECK_ACL(aclrtRecordEvent(ready, nativeStream(getCurrentStream(device_))));
  // A device record on the current stream's lane, linked to the host op queuing it (null while
  // the profiler is off): from the end of the wait for the queued work to the operation's end.
  npurtProfiledTask* profiled =
      npurtProfilerBeginTask(NPURT_TASK_COLLECTIVE, collectiveRecordName(type), nativeStream(getCurrentStream(device_)),
                             totalBytes(op->published.empty() ? userOutputs : op->published), -1);
  auto fail = [this, work](const std::string& name, const std::exception& e) {
    bool peer = dynamic_cast<const lccl::PeerError*>(&e) != nullptr;
    std::string message = name + " failed: " + describe(e);
    if (!broken_.exchange(true)) brokenReason_ = message;
    work->complete(distError(peer ? ErrCode::TIMEOUT : ErrCode::PARAM,
                             peer ? message + ". Check that every rank is alive and issues the same collectives in "
                                              "the same order, then destroy the process group."
                                  : message));
  };
  starter_->post([this, op, work, ready, profiled, collective, start = std::move(start), finish = std::move(finish),
                  fail] {
    try {
      aclError waited = aclrtSynchronizeEvent(ready);
      aclrtDestroyEvent(ready);
      TORCH_CHECK(waited == ACL_SUCCESS, "the npu work queued before it failed: ", aclGetRecentErrMsg());
      npurtProfilerTaskStarted(profiled);
      op->deadline = lccl::Clock::now() + timeout_;
      if (collective) {
        // A ring slot is reused kRing operations later: only once this rank finished that one.
        std::unique_lock<std::mutex> lock(flightMutex_);
        if (!flightCv_.wait_until(lock, op->deadline,
                                  [&] { return broken_ || op->seq < finishedSeq_ + lccl::kRing; })) {
          throw lccl::PeerError("earlier operations did not finish within the process group timeout", true);
        }
        lock.unlock();
        if (broken_) throw std::runtime_error("an earlier operation failed");
        std::vector<lccl::LocalBuffer> buffers;
        for (const at::Tensor& t : op->published) buffers.push_back({t.numel() ? t.data_ptr() : nullptr, t.nbytes()});
        transport_->post(op->seq, buffers);
      }
      if (start) start(*op);
    } catch (const std::exception& e) {
      fail(op->name, e);
      npurtProfilerTaskEnded(profiled, ACL_ERROR_RT_INTERNAL_ERROR);
      finisher_->post([this, collective] {
        if (!collective) return;
        std::lock_guard<std::mutex> lock(flightMutex_);
        ++finishedSeq_;
        flightCv_.notify_all();
      });
      return;
    }
    finisher_->post([this, op, work, profiled, collective, finish, fail] {
      aclError status = ACL_ERROR_RT_INTERNAL_ERROR;
      try {
        if (broken_) throw std::runtime_error("the process group failed earlier: " + brokenReason_);
        op->deadline = lccl::Clock::now() + timeout_;
        c10::InferenceMode noAutograd;
        if (finish) finish(*op);
        for (size_t i = 0; i < op->targets.size(); ++i) {
          if (!op->targets[i].is_same(op->outputs[i])) {
            at::from_blob(op->targets[i].data_ptr(), op->targets[i].sizes(), op->targets[i].strides(),
                          op->targets[i].options().device(c10::kCPU))
                .copy_(at::from_blob(op->outputs[i].data_ptr(), op->outputs[i].sizes(),
                                     op->outputs[i].options().device(c10::kCPU)));
          }
        }
        if (op->source >= 0) work->setSourceRank(op->source);
        status = ACL_SUCCESS;
        npurtProfilerTaskEnded(profiled, status);
        work->complete(nullptr);
      } catch (const std::exception& e) {
        if (status != ACL_SUCCESS) npurtProfilerTaskEnded(profiled, status);
        if (!work->isCompleted()) fail(op->name, e);
      }
      if (collective) {
        std::lock_guard<std::mutex> lock(flightMutex_);
        ++finishedSeq_;
        flightCv_.notify_all();
      }
    });
  });
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLCCL::broadcast(std::vector<at::Tensor>& tensors,
                                                           const c10d::BroadcastOptions& opts) {
  TORCH_CHECK(tensors.size() == 1, "lccl broadcast takes one tensor\n", errCode(SubModule::DIST, ErrCode::PARAM));
  int root = static_cast<int>(opts.rootRank);
  return enqueue(c10d::OpType::BROADCAST, tensors, tensors, true, nullptr, [root](Op& op) {
    op.barrier();
    if (op.rank != root) copyBytes(op.published[0], op.peer(root, 0, op.published[0]));
    op.barrier();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLCCL::allreduce(std::vector<at::Tensor>& tensors,
                                                           const c10d::AllreduceOptions& opts) {
  TORCH_CHECK(tensors.size() == 1, "lccl allreduce takes one tensor\n", errCode(SubModule::DIST, ErrCode::PARAM));
  checkReduceOp(opts.reduceOp, tensors, "allreduce");
  c10d::ReduceOp reduceOp = opts.reduceOp;
  return enqueue(c10d::OpType::ALLREDUCE, tensors, tensors, true, nullptr,
                 [reduceOp](Op& op) { allreduceTensors(op, reduceOp); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLCCL::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                     const c10d::AllreduceCoalescedOptions& opts) {
  checkReduceOp(opts.reduceOp, tensors, "allreduce_coalesced");
  c10d::ReduceOp reduceOp = opts.reduceOp;
  return enqueue(c10d::OpType::ALLREDUCE_COALESCED, tensors, tensors, true, nullptr,
                 [reduceOp](Op& op) { allreduceTensors(op, reduceOp); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLCCL::reduce(std::vector<at::Tensor>& tensors,
                                                        const c10d::ReduceOptions& opts) {
  TORCH_CHECK(tensors.size() == 1, "lccl reduce takes one tensor\n", errCode(SubModule::DIST, ErrCode::PARAM));
  checkReduceOp(opts.reduceOp, tensors, "reduce");
  int root = static_cast<int>(opts.rootRank);
  c10d::ReduceOp reduceOp = opts.reduceOp;
  return enqueue(c10d::OpType::REDUCE, tensors, tensors, true, nullptr, [root, reduceOp](Op& op) {
    op.barrier();
    if (op.rank == root) {
      std::vector<at::Tensor> others;
      for (int q = 0; q < op.size; ++q) {
        if (q != root) others.push_back(op.peer(q, 0, op.published[0]));
      }
      reduceInto(host(op.published[0]), others, reduceOp);
    }
    op.barrier();
  });
}

namespace {

// out[q] = what rank q published at `index`, for every rank (this rank's from `own`).
void gatherInto(const Op& op, const std::vector<at::Tensor>& outs, int index, const at::Tensor& own) {
  for (int q = 0; q < op.size; ++q) copyBytes(outs[q], q == op.rank ? own : op.peer(q, index, outs[q]));
}

std::vector<at::Tensor> chunksOf(const at::Tensor& t, int parts) {
  TORCH_CHECK(t.dim() > 0 && t.size(0) % parts == 0, "lccl: dim 0 (", t.dim() ? t.size(0) : 0,
              ") must split evenly over ", parts, " ranks\n", errCode(SubModule::DIST, ErrCode::PARAM));
  return t.chunk(parts);
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupLCCL::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                           std::vector<at::Tensor>& inputs,
                                                           const c10d::AllgatherOptions& opts) {
  TORCH_CHECK(outputs.size() == 1 && inputs.size() == 1 && static_cast<int>(outputs[0].size()) == size_,
              "lccl allgather takes one input tensor and one output list with a tensor per rank\n",
              errCode(SubModule::DIST, ErrCode::PARAM));
  return enqueue(c10d::OpType::ALLGATHER, inputs, outputs[0], true, nullptr, [](Op& op) {
    op.barrier();
    gatherInto(op, op.outputs, 0, op.published[0]);
    op.barrier();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLCCL::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                 const c10d::AllgatherOptions& opts) {
  TORCH_CHECK(output.numel() == input.numel() * size_, "lccl _allgather_base: the output must hold ", size_,
              " times the input's elements\n", errCode(SubModule::DIST, ErrCode::PARAM));
  return enqueue(c10d::OpType::_ALLGATHER_BASE, {input}, {output}, true, nullptr, [](Op& op) {
    op.barrier();
    gatherInto(op, op.outputs[0].view({-1}).chunk(op.size), 0, op.published[0]);
    op.barrier();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLCCL::allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                                 std::vector<at::Tensor>& inputs,
                                                                                 const c10d::AllgatherOptions& opts) {
  TORCH_CHECK(outputs.size() == inputs.size(), "lccl allgather_into_tensor_coalesced: one output per input\n",
              errCode(SubModule::DIST, ErrCode::PARAM));
  return enqueue(c10d::OpType::COALESCED, inputs, outputs, true, nullptr, [](Op& op) {
    op.barrier();
    for (size_t i = 0; i < op.published.size(); ++i) {
      gatherInto(op, op.outputs[i].view({-1}).chunk(op.size), static_cast<int>(i), op.published[i]);
    }
    op.barrier();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLCCL::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                        std::vector<at::Tensor>& inputs,
                                                        const c10d::GatherOptions& opts) {
  int root = static_cast<int>(opts.rootRank);
  TORCH_CHECK(inputs.size() == 1 && (rank_ != root || (outputs.size() == 1 && static_cast<int>(outputs[0].size()) == size_)),
              "lccl gather: one input; the root passes one output per rank\n", errCode(SubModule::DIST, ErrCode::PARAM));
  std::vector<at::Tensor> outs = rank_ == root ? outputs[0] : std::vector<at::Tensor>{};
  return enqueue(c10d::OpType::GATHER, inputs, outs, true, nullptr, [root](Op& op) {
    op.barrier();
    if (op.rank == root) gatherInto(op, op.outputs, 0, op.published[0]);
    op.barrier();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLCCL::scatter(std::vector<at::Tensor>& outputs,
                                                         std::vector<std::vector<at::Tensor>>& inputs,
                                                         const c10d::ScatterOptions& opts) {
  int root = static_cast<int>(opts.rootRank);
  TORCH_CHECK(outputs.size() == 1 && (rank_ != root || (inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_)),
              "lccl scatter: one output; the root passes one input per rank\n", errCode(SubModule::DIST, ErrCode::PARAM));
  std::vector<at::Tensor> ins = rank_ == root ? inputs[0] : std::vector<at::Tensor>{};
  return enqueue(c10d::OpType::SCATTER, ins, outputs, true, nullptr, [root](Op& op) {
    op.barrier();
    copyBytes(op.outputs[0], op.rank == root ? op.published[op.rank] : op.peer(root, op.rank, op.outputs[0]));
    op.barrier();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLCCL::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                                const c10d::ReduceScatterOptions& opts) {
  TORCH_CHECK(outputs.size() == 1 && inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_,
              "lccl reduce_scatter takes one output tensor and an input list with a tensor per rank\n",
              errCode(SubModule::DIST, ErrCode::PARAM));
  checkReduceOp(opts.reduceOp, outputs, "reduce_scatter");
  c10d::ReduceOp reduceOp = opts.reduceOp;
  return enqueue(c10d::OpType::REDUCE_SCATTER, inputs[0], outputs, true, nullptr, [reduceOp](Op& op) {
    op.barrier();
    at::Tensor out = host(op.outputs[0]);
    copyBytes(op.outputs[0], op.published[op.rank]);
    std::vector<at::Tensor> others;
    for (int q = 0; q < op.size; ++q) {
      if (q != op.rank) others.push_back(op.peer(q, op.rank, op.outputs[0]));
    }
    reduceInto(out, others, reduceOp);
    op.barrier();
  });
}

namespace {

void reduceScatterChunks(const Op& op, const c10d::ReduceOp& reduceOp) {
  op.barrier();
  for (size_t i = 0; i < op.published.size(); ++i) {
    const at::Tensor& out = op.outputs[i];
    int64_t n = out.numel();
    at::Tensor acc = host(out);
    acc.copy_(host(op.published[i]).slice(0, op.rank * n, (op.rank + 1) * n));
    std::vector<at::Tensor> others;
    for (int q = 0; q < op.size; ++q) {
      if (q != op.rank) others.push_back(op.peer(q, static_cast<int>(i), op.published[i]).slice(0, op.rank * n, (op.rank + 1) * n));
    }
    reduceInto(acc, others, reduceOp);
  }
  op.barrier();
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupLCCL::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                      const c10d::ReduceScatterOptions& opts) {
  TORCH_CHECK(input.numel() == output.numel() * size_, "lccl _reduce_scatter_base: the input must hold ", size_,
              " times the output's elements\n", errCode(SubModule::DIST, ErrCode::PARAM));
  checkReduceOp(opts.reduceOp, {output}, "reduce_scatter");
  c10d::ReduceOp reduceOp = opts.reduceOp;
  return enqueue(c10d::OpType::_REDUCE_SCATTER_BASE, {input}, {output}, true, nullptr,
                 [reduceOp](Op& op) { reduceScatterChunks(op, reduceOp); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLCCL::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs, const c10d::ReduceScatterOptions& opts) {
  TORCH_CHECK(outputs.size() == inputs.size(), "lccl reduce_scatter_tensor_coalesced: one output per input\n",
              errCode(SubModule::DIST, ErrCode::PARAM));
  checkReduceOp(opts.reduceOp, outputs, "reduce_scatter");
  c10d::ReduceOp reduceOp = opts.reduceOp;
  return enqueue(c10d::OpType::COALESCED, inputs, outputs, true, nullptr,
                 [reduceOp](Op& op) { reduceScatterChunks(op, reduceOp); });
}

namespace {

std::vector<at::Tensor> splitRows(const at::Tensor& t, const std::vector<int64_t>& sizes, int parts, const char* what) {
  if (sizes.empty()) return chunksOf(t, parts);
  TORCH_CHECK(static_cast<int>(sizes.size()) == parts, "lccl alltoall_base: ", what, " needs one size per rank\n",
              errCode(SubModule::DIST, ErrCode::PARAM));
  return t.split_with_sizes(sizes);
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupLCCL::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                               std::vector<int64_t>& outputSplitSizes,
                                                               std::vector<int64_t>& inputSplitSizes,
                                                               const c10d::AllToAllOptions& opts) {
  checkFormats("lccl", c10d::OpType::ALLTOALL_BASE, {input}, {output}, "alltoall_base");
  std::vector<int64_t> outSizes = outputSplitSizes;
  at::Tensor dense = input.contiguous();
  // Each rank publishes one slice of its input per destination.
  std::vector<at::Tensor> slices = splitRows(dense, inputSplitSizes, size_, "input_split_sizes");
  return enqueue(c10d::OpType::ALLTOALL_BASE, slices, {output}, true, nullptr, [outSizes](Op& op) {
    op.barrier();
    std::vector<at::Tensor> outs = splitRows(op.outputs[0], outSizes, op.size, "output_split_sizes");
    for (int q = 0; q < op.size; ++q) {
      copyBytes(outs[q], q == op.rank ? op.published[op.rank] : op.peer(q, op.rank, outs[q]));
    }
    op.barrier();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLCCL::alltoall(std::vector<at::Tensor>& outputs,
                                                          std::vector<at::Tensor>& inputs,
                                                          const c10d::AllToAllOptions& opts) {
  TORCH_CHECK(static_cast<int>(outputs.size()) == size_ && static_cast<int>(inputs.size()) == size_,
              "lccl alltoall takes a tensor per rank in both lists\n", errCode(SubModule::DIST, ErrCode::PARAM));
  return enqueue(c10d::OpType::ALLTOALL, inputs, outputs, true, nullptr, [](Op& op) {
    op.barrier();
    for (int q = 0; q < op.size; ++q) {
      copyBytes(op.outputs[q], q == op.rank ? op.published[op.rank] : op.peer(q, op.rank, op.outputs[q]));
    }
    op.barrier();
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLCCL::send(std::vector<at::Tensor>& tensors, int dstRank, int tag) {
  TORCH_CHECK(tensors.size() == 1 && dstRank >= 0 && dstRank < size_ && dstRank != rank_,
              "lccl send: one tensor to another rank of the group\n", errCode(SubModule::DIST, ErrCode::PARAM));
  checkFormats("lccl", c10d::OpType::SEND, tensors, {}, "send");
  at::Tensor dense = internalDesc(tensors[0]) != nullptr ? hostView(tensors[0]) : tensors[0].contiguous();
  return enqueue(
      c10d::OpType::SEND, {}, {}, false,
      [dstRank, dense](Op& op) {
        op.message = op.transport->postSend(dstRank, {dense.numel() ? dense.data_ptr() : nullptr, dense.nbytes()},
                                            op.deadline);
      },
      [dstRank, dense](Op& op) { op.transport->waitAcked(dstRank, op.message, op.deadline); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLCCL::recv(std::vector<at::Tensor>& tensors, int srcRank, int tag) {
  TORCH_CHECK(tensors.size() == 1 && srcRank >= 0 && srcRank < size_ && srcRank != rank_,
              "lccl recv: one tensor from another rank of the group\n",
              errCode(SubModule::DIST, ErrCode::PARAM));
  return enqueue(c10d::OpType::RECV, {}, tensors, false, nullptr, [srcRank](Op& op) {
    const at::Tensor& out = op.outputs[0];
    op.transport->receive(srcRank, {out.numel() ? out.data_ptr() : nullptr, out.nbytes()}, op.deadline);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLCCL::recvAnysource(std::vector<at::Tensor>& tensors, int tag) {
  TORCH_CHECK(tensors.size() == 1, "lccl recv: one tensor\n", errCode(SubModule::DIST, ErrCode::PARAM));
  return enqueue(c10d::OpType::RECVANYSOURCE, {}, tensors, false, nullptr, [](Op& op) {
    const at::Tensor& out = op.outputs[0];
    op.source = op.transport->receiveAny({out.numel() ? out.data_ptr() : nullptr, out.nbytes()}, op.deadline);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLCCL::barrier(const c10d::BarrierOptions& opts) {
  return enqueue(c10d::OpType::BARRIER, {}, {}, true, nullptr, [](Op& op) { op.barrier(); });
}

TORCH_NPU_BINDINGS(bindProcessGroupLCCL) {
  namespace py = pybind11;
  py::module_::import("torch.distributed");
  auto dist = m.def_submodule("_distributed", "the hccl and lccl process-group backends");
  py::class_<ProcessGroupLCCL, c10d::Backend, c10::intrusive_ptr<ProcessGroupLCCL>>(dist, "ProcessGroupLCCL")
      .def(py::init([](int rank, int size, c10::DeviceIndex device, std::chrono::milliseconds timeout) {
             return c10::make_intrusive<ProcessGroupLCCL>(rank, size, device, timeout);
           }),
           py::arg("rank"), py::arg("size"), py::arg("device"), py::arg("timeout"))
      .def_property_readonly("device", &ProcessGroupLCCL::device)
      .def_property_readonly("timeout", &ProcessGroupLCCL::timeout)
      .def("_local_descriptor", [](const ProcessGroupLCCL& pg) { return py::bytes(pg.localDescriptor()); })
      .def("_connect", [](ProcessGroupLCCL& pg, const std::vector<py::bytes>& descriptors) {
        std::vector<std::string> raw;
        for (const py::bytes& d : descriptors) raw.push_back(d);
        pg.connect(raw);
      });
}

}  // namespace torch_npu::distributed
