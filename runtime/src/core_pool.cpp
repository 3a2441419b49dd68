#include "core_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

namespace npurt {
namespace {

struct Job {
  const std::function<int32_t(uint32_t)>* block;
  uint32_t blockDim;
  std::atomic<uint32_t> next{0};
  std::atomic<uint32_t> done{0};
  std::atomic<int32_t> code{0};
  std::atomic<uint32_t> failedBlock{0};
  std::mutex mutex;
  std::condition_variable finished;
};

void runBlock(Job& job, uint32_t idx) {
  int32_t rc = (*job.block)(idx);
  if (rc != 0) {
    int32_t expected = 0;
    if (job.code.compare_exchange_strong(expected, rc)) job.failedBlock = idx;
  }
  if (job.done.fetch_add(1) + 1 == job.blockDim) {
    std::lock_guard<std::mutex> lock(job.mutex);
    job.finished.notify_all();
  }
}

class CorePool {
 public:
  CorePool() {
    unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    // The caller of runBlocks works too, so cores - 1 helpers keep every core busy.
    for (unsigned i = 1; i < cores; ++i) std::thread([this] { work(); }).detach();
  }

  BlockFailure run(uint32_t blockDim, const std::function<int32_t(uint32_t)>& block) {
    auto job = std::make_shared<Job>();
    job->block = &block;
    job->blockDim = blockDim;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_back(job);
    }
    jobQueued_.notify_all();
    for (uint32_t idx; (idx = job->next.fetch_add(1)) < blockDim;) runBlock(*job, idx);
    {
      std::unique_lock<std::mutex> lock(job->mutex);
      job->finished.wait(lock, [&] { return job->done.load() == blockDim; });
    }
    retire(job);
    return BlockFailure{job->code.load(), job->failedBlock.load()};
  }

 private:
  void retire(const std::shared_ptr<Job>& job) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find(jobs_.begin(), jobs_.end(), job);
    if (it != jobs_.end()) jobs_.erase(it);
  }

  void work() {
    for (;;) {
      std::shared_ptr<Job> job;
      uint32_t idx;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        jobQueued_.wait(lock, [this] { return !jobs_.empty(); });
        job = jobs_.front();
        idx = job->next.fetch_add(1);
        // Every block is taken: the job leaves the queue; its owner waits for the stragglers.
        if (idx >= job->blockDim) {
          jobs_.pop_front();
          continue;
        }
      }
      runBlock(*job, idx);
    }
  }

  std::mutex mutex_;
  std::condition_variable jobQueued_;
  std::deque<std::shared_ptr<Job>> jobs_;
};

// Leaked on purpose: its threads wait on the pool for the life of the process.
CorePool& corePool() {
  static CorePool* pool = new CorePool();
  return *pool;
}

}  // namespace

BlockFailure runBlocks(uint32_t blockDim, const std::function<int32_t(uint32_t)>& block) {
  if (blockDim == 1) {
    // One block needs no hand-off: run it here and keep launch latency low.
    int32_t rc = block(0);
    return BlockFailure{rc, 0};
  }
  return corePool().run(blockDim, block);
}

}  // namespace npurt
