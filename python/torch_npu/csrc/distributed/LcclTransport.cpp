#include "torch_npu/csrc/distributed/LcclTransport.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <new>

#include "npurt/acl_rt.h"

namespace torch_npu::distributed::lccl {
namespace {

constexpr uint64_t kBlockMagic = 0x6c63636c2d637462ULL;  // "lccl-ctb"
constexpr auto kLivenessInterval = std::chrono::milliseconds(100);
// A wait spins this many pauses (a few microseconds: a peer already on its way) before it sleeps
// on the futex. Not sched_yield: on a loaded host a yield hands the core to another process
// for its whole time slice, milliseconds, while the futex wake runs the waiter at once.
constexpr int kSpins = 64;

inline void cpuPause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

bool reached(uint32_t value, uint32_t target) { return static_cast<int32_t>(value - target) >= 0; }

std::string runtimeError(const char* what) { return std::string(what) + ": " + aclGetRecentErrMsg(); }

}  // namespace

Transport::Transport(int rank, int size, int32_t device)
    : rank_(rank), size_(size), peers_(size, nullptr), localPosts_(kRing), received_(size, 0), sentCount_(size, 0) {
  if (size > kMaxRanks) {
    throw std::invalid_argument("lccl supports at most " + std::to_string(kMaxRanks) + " ranks on one host, got " +
                                std::to_string(size) + ": use hccl");
  }
  if (aclrtMalloc(&blockMemory_, sizeof(ControlBlock), device) != ACL_SUCCESS) {
    throw std::runtime_error(runtimeError("lccl: allocating the control block failed"));
  }
  self_ = new (blockMemory_) ControlBlock();
  self_->magic = kBlockMagic;
  self_->pid = getpid();
  self_->rank = rank;
  peers_[rank] = self_;
}

Transport::~Transport() {
  // Peers keep their own mapping of the block until they unmap it: freeing here is safe.
  self_->~ControlBlock();
  (void)aclrtFree(blockMemory_);
}

std::string Transport::localDescriptor() const {
  npurt::IpcBufferDesc desc;
  if (npurt::ipcDescribe(blockMemory_, sizeof(ControlBlock), &desc) != ACL_SUCCESS) {
    throw std::runtime_error(runtimeError("lccl: exporting the control block failed"));
  }
  return std::string(reinterpret_cast<const char*>(&desc), sizeof(desc));
}

void Transport::connect(const std::vector<std::string>& descriptors) {
  if (static_cast<int>(descriptors.size()) != size_) throw std::invalid_argument("lccl: one descriptor per rank");
  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_) continue;
    npurt::IpcBufferDesc desc;
    if (descriptors[peer].size() != sizeof(desc)) throw std::invalid_argument("lccl: malformed peer descriptor");
    std::memcpy(&desc, descriptors[peer].data(), sizeof(desc));
    void* mapped = nullptr;
    if (npurt::ipcOpenPeer(desc, &mapped) != ACL_SUCCESS) {
      throw std::runtime_error(runtimeError(("lccl: mapping rank " + std::to_string(peer) + "'s control block failed (" +
                                             "lccl needs every rank on this host, run by the same user)")
                                                .c_str()));
    }
    auto* block = static_cast<ControlBlock*>(mapped);
    if (block->magic != kBlockMagic || block->rank != peer) {
      throw std::runtime_error("lccl: rank " + std::to_string(peer) + " published no control block");
    }
    peers_[peer] = block;
  }
}

// Gone, or a zombie its parent has not reaped yet (kill(pid, 0) still succeeds on those).
static bool processExited(int32_t pid) {
  if (kill(pid, 0) != 0 && errno == ESRCH) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return false;
  char state = text[close + 2];
  return state == 'Z' || state == 'X';
}

void Transport::checkPeerAlive(int peer, const std::string& what) {
  if (processExited(peers_[peer]->pid)) {
    throw PeerError(what + ": rank " + std::to_string(peer) + " (pid " + std::to_string(peers_[peer]->pid) +
                        ") has exited",
                    false);
  }
}

void Transport::waitFor(int peer, const std::atomic<uint32_t>* word, uint32_t target, const std::string& what,
                        Clock::time_point deadline) {
  for (int spin = 0; spin < kSpins; ++spin) {
    if (reached(word->load(std::memory_order_acquire), target)) return;
    cpuPause();
  }
  auto nextLiveness = Clock::now() + kLivenessInterval;
  for (;;) {
    uint32_t value = word->load(std::memory_order_acquire);
    if (reached(value, target)) return;
    auto now = Clock::now();
    if (now >= deadline) {
      throw PeerError(what + ": rank " + std::to_string(peer) + " did not arrive within the process group timeout",
                      true);
    }
    if (now >= nextLiveness) {
      checkPeerAlive(peer, what);
      nextLiveness = now + kLivenessInterval;
    }
    npurt::sharedWait(word, value, 20);
  }
}

void Transport::post(uint64_t seq, const std::vector<LocalBuffer>& buffers) {
  if (buffers.size() > static_cast<size_t>(kMaxPost)) {
    throw std::invalid_argument("lccl: one operation takes at most " + std::to_string(kMaxPost) + " tensors, got " +
                                std::to_string(buffers.size()) + "; split the call");
  }
  Post& slot = self_->posts[seq % kRing];
  for (size_t i = 0; i < buffers.size(); ++i) {
    npurt::IpcBufferDesc desc;  // empty tensors publish an empty descriptor
    if (buffers[i].size > 0 && npurt::ipcDescribe(buffers[i].ptr, buffers[i].size, &desc) != ACL_SUCCESS) {
      throw std::invalid_argument(runtimeError("lccl: the tensor's memory cannot be shared with other ranks"));
    }
    slot.buffers[i] = desc;
  }
  slot.count = static_cast<uint32_t>(buffers.size());
  localPosts_[seq % kRing] = buffers;
}

void Transport::barrier(const std::string& what, Clock::time_point deadline) {
  uint32_t target = ++barriers_;
  self_->arrive.store(target, std::memory_order_release);
  npurt::sharedWake(&self_->arrive);
  for (int peer = 0; peer < size_; ++peer) {
    if (peer != rank_) waitFor(peer, &peers_[peer]->arrive, target, what, deadline);
  }
}

LocalBuffer Transport::buffer(int peer, uint64_t seq, int index) {
  if (peer == rank_) return localPosts_[seq % kRing].at(index);
  const Post& slot = peers_[peer]->posts[seq % kRing];
  if (index >= static_cast<int>(slot.count)) {
    throw std::invalid_argument("lccl: rank " + std::to_string(peer) + " passed fewer tensors to this collective (" +
                                std::to_string(slot.count) + ") than rank " + std::to_string(rank_));
  }
  const npurt::IpcBufferDesc& desc = slot.buffers[index];
  if (desc.size == 0) return LocalBuffer{};
  void* mapped = nullptr;
  if (npurt::ipcOpenPeer(desc, &mapped) != ACL_SUCCESS) {
    throw std::runtime_error(runtimeError(("lccl: mapping rank " + std::to_string(peer) + "'s tensor failed").c_str()));
  }
  return LocalBuffer{mapped, desc.size};
}

uint32_t Transport::postSend(int dst, const LocalBuffer& data, Clock::time_point deadline) {
  uint32_t message = sentCount_[dst]++;
  // The receiver's ring slot is free once it acked the message kRing before this one.
  waitFor(dst, &peers_[dst]->acked[rank_], message - kRing + 1, "send to rank " + std::to_string(dst), deadline);
  npurt::IpcBufferDesc desc;
  if (data.size > 0 && npurt::ipcDescribe(data.ptr, data.size, &desc) != ACL_SUCCESS) {
    throw std::invalid_argument(runtimeError("lccl send: the tensor's memory cannot be shared with other ranks"));
  }
  Channel& channel = self_->to[dst];
  channel.ring[message % kRing] = desc;
  channel.sent.store(message + 1, std::memory_order_release);
  npurt::sharedWake(&channel.sent);
  return message;
}

void Transport::waitAcked(int dst, uint32_t message, Clock::time_point deadline) {
  waitFor(dst, &peers_[dst]->acked[rank_], message + 1, "send to rank " + std::to_string(dst), deadline);
}

void Transport::receive(int src, const LocalBuffer& data, Clock::time_point deadline) {
  waitFor(src, &peers_[src]->to[rank_].sent, received_[src] + 1, "recv from rank " + std::to_string(src), deadline);
  take(src, data);
}

int Transport::receiveAny(const LocalBuffer& data, Clock::time_point deadline) {
  auto nextLiveness = Clock::now() + kLivenessInterval;
  for (int round = 0;; ++round) {
    for (int i = 0; i < size_; ++i) {
      int src = (nextAnySource_ + i) % size_;
      if (src == rank_) continue;
      if (reached(peers_[src]->to[rank_].sent.load(std::memory_order_acquire), received_[src] + 1)) {
        nextAnySource_ = (src + 1) % size_;
        take(src, data);
        return src;
      }
    }
    if (round < kSpins) {
      cpuPause();
      continue;
    }
    auto now = Clock::now();
    if (now >= deadline) throw PeerError("recv from any source: no rank sent within the process group timeout", true);
    if (now >= nextLiveness) {
      int alive = 0;
      for (int peer = 0; peer < size_; ++peer) alive += peer != rank_ && !processExited(peers_[peer]->pid);
      if (alive == 0) throw PeerError("recv from any source: every other rank has exited", false);
      nextLiveness = now + kLivenessInterval;
    }
    // No single word to sleep on: sleep briefly on one peer's and look at all again.
    int peer = (rank_ + 1) % size_;
    const std::atomic<uint32_t>& sent = peers_[peer]->to[rank_].sent;
    npurt::sharedWait(&sent, sent.load(std::memory_order_acquire), 1);
  }
}

void Transport::take(int src, const LocalBuffer& data) {
  uint32_t message = received_[src];
  const npurt::IpcBufferDesc& desc = peers_[src]->to[rank_].ring[message % kRing];
  if (desc.size != data.size) {
    throw std::invalid_argument("lccl recv: rank " + std::to_string(src) + " sent " + std::to_string(desc.size) +
                                " bytes, the receiving tensor holds " + std::to_string(data.size));
  }
  if (data.size > 0) {
    void* mapped = nullptr;
    if (npurt::ipcOpenPeer(desc, &mapped) != ACL_SUCCESS) {
      throw std::runtime_error(runtimeError("lccl recv: mapping the sender's tensor failed"));
    }
    std::memcpy(data.ptr, mapped, data.size);
  }
  received_[src] = message + 1;
  self_->acked[src].store(message + 1, std::memory_order_release);
  npurt::sharedWake(&self_->acked[src]);
}

}  // namespace torch_npu::distributed::lccl
