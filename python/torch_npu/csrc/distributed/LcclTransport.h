// The shared-memory transport under ProcessGroupLCCL (no torch headers: it builds fast).
//
// Each rank owns a control block in its own device memory (a memfd segment, see
// npurt/ipc.h) that every peer maps. Ranks synchronise on counters in those blocks
// (stores with release order + futex wakes, loads with acquire order + futex waits)
// and publish, per operation, descriptors of their tensors' device memory; peers map
// that memory and read it directly. What a rank writes in a peer's tensor (all_reduce's
// slice) no other rank touches during the operation, so the only ordering needed is
// "posted before the barrier, read or written after it, done before the next barrier".
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "npurt/ipc.h"

namespace torch_npu::distributed::lccl {

constexpr int kMaxRanks = 16;
constexpr int kRing = 8;      // operations in flight between the starting and the finishing thread
constexpr int kMaxPost = 64;  // buffers one operation publishes

using Clock = std::chrono::steady_clock;

// A peer did not arrive in time (timeout) or its process is gone (dead).
class PeerError : public std::runtime_error {
 public:
  PeerError(const std::string& message, bool timeout) : std::runtime_error(message), timeout_(timeout) {}
  bool timeout() const { return timeout_; }

 private:
  bool timeout_;
};

struct Post {
  uint32_t count = 0;
  npurt::IpcBufferDesc buffers[kMaxPost];
};

struct Channel {
  std::atomic<uint32_t> sent;  // messages posted to this destination
  npurt::IpcBufferDesc ring[kRing];
};

struct ControlBlock {
  uint64_t magic;
  int32_t pid;
  int32_t rank;
  std::atomic<uint32_t> arrive;  // barriers this rank has reached
  Post posts[kRing];
  Channel to[kMaxRanks];
  std::atomic<uint32_t> acked[kMaxRanks];  // messages received from each source
};

// One device buffer of this rank, as an operation publishes it.
struct LocalBuffer {
  void* ptr = nullptr;
  size_t size = 0;
};

class Transport {
 public:
  Transport(int rank, int size, int32_t device);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // What peers pass to connect() to map this rank's control block.
  std::string localDescriptor() const;
  void connect(const std::vector<std::string>& descriptors);

  // Publishes this rank's buffers for operation `seq` (the starting thread).
  void post(uint64_t seq, const std::vector<LocalBuffer>& buffers);
  // Every rank reached this barrier (the finishing thread; every rank calls the same sequence).
  void barrier(const std::string& what, Clock::time_point deadline);
  // Buffer `index` that `peer` published for `seq`, mapped here (this rank's: its own pointer).
  LocalBuffer buffer(int peer, uint64_t seq, int index);

  // Point to point: the sender posts (starting thread), then waits for the receiver's ack.
  uint32_t postSend(int dst, const LocalBuffer& data, Clock::time_point deadline);
  void waitAcked(int dst, uint32_t message, Clock::time_point deadline);
  // Copies the next message from `src` into `data` (sizes must match) and acks it.
  void receive(int src, const LocalBuffer& data, Clock::time_point deadline);
  // The same for the first message any peer sent (peers in turn); returns its source.
  int receiveAny(const LocalBuffer& data, Clock::time_point deadline);

 private:
  // Waits until peer's *word reaches `target` (32-bit wrapping counters).
  void waitFor(int peer, const std::atomic<uint32_t>* word, uint32_t target, const std::string& what,
               Clock::time_point deadline);
  void checkPeerAlive(int peer, const std::string& what);
  // Copies message received_[src] from `src` (already posted) into `data` and acks it.
  void take(int src, const LocalBuffer& data);

  int rank_;
  int size_;
  void* blockMemory_ = nullptr;
  ControlBlock* self_ = nullptr;
  std::vector<ControlBlock*> peers_;  // by rank (this rank's own block included)
  std::vector<std::vector<LocalBuffer>> localPosts_;  // by seq % kRing
  uint32_t barriers_ = 0;
  std::vector<uint32_t> received_;  // messages received from each source
  std::vector<uint32_t> sentCount_;
  int nextAnySource_ = 0;  // where receiveAny looks first: peers take turns
};

}  // namespace torch_npu::distributed::lccl
