// A thread that runs queued closures one at a time, in the order they were queued.
//
// ProcessGroupHCCL needs two: one that starts Gloo operations strictly in call order
// (every rank must start collectives in the same order), and one that waits for them
// to finish, so a slow receive never holds back the start of the matching send.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace torch_npu::distributed {

class FifoThread {
 public:
  FifoThread() : thread_([this] { drain(); }) {}
  FifoThread(const FifoThread&) = delete;
  FifoThread& operator=(const FifoThread&) = delete;

  // Runs what is already queued, then joins.
  ~FifoThread() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }

  void post(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_one();
  }

 private:
  void drain() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the queue above exists
};

}  // namespace torch_npu::distributed
