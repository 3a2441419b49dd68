// TPipe / TQue / TBuf of the CPU twin: per-core local memory with capacity
// checks, and queues that enforce the AllocTensor -> EnQue -> DeQue -> FreeTensor
// discipline the hardware pipeline relies on.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

namespace AscendC {

class TPipe;

// Buffers of one queue or TBuf, carved out of a TPipe's space at InitBuffer.
class TwinBufferSet {
 public:
  void Bind(TPosition pos, std::vector<uint8_t*> bufs, uint32_t bytes) {
    pos_ = pos;
    bufs_ = std::move(bufs);
    bytes_ = bytes;
    free_.assign(bufs_.size(), true);
  }
  TPosition Position() const { return pos_; }
  uint32_t Bytes() const { return bytes_; }

 protected:
  TPosition pos_ = TPosition::VECCALC;
  std::vector<uint8_t*> bufs_;
  std::vector<bool> free_;
  uint32_t bytes_ = 0;
};

template <TPosition POS, int32_t DEPTH = 1>
class TQue : public TwinBufferSet {
 public:
  template <typename T>
  LocalTensor<T> AllocTensor() {
    if (bufs_.empty()) TwinFail("AllocTensor on a queue that InitBuffer never set up");
    for (size_t i = 0; i < bufs_.size(); ++i) {
      if (free_[i]) {
        free_[i] = false;
        return LocalTensor<T>(reinterpret_cast<T*>(bufs_[i]), bytes_ / sizeof(T), POS, static_cast<int32_t>(i));
      }
    }
    TwinFail("AllocTensor with every buffer of the queue in use (missing FreeTensor?)");
  }
  template <typename T>
  void EnQue(const LocalTensor<T>& t) {
    if (t.BufferId() < 0 || t.GetPosition() != POS) TwinFail("EnQue of a tensor from another queue");
    queued_.push_back(t.BufferId());
  }
  template <typename T>
  LocalTensor<T> DeQue() {
    if (queued_.empty()) TwinFail("DeQue on an empty queue (EnQue missing in the previous stage)");
    int32_t id = queued_.front();
    queued_.pop_front();
    return LocalTensor<T>(reinterpret_cast<T*>(bufs_[id]), bytes_ / sizeof(T), POS, id);
  }
  template <typename T>
  void FreeTensor(const LocalTensor<T>& t) {
    int32_t id = t.BufferId();
    if (id < 0 || static_cast<size_t>(id) >= bufs_.size() || free_[id])
      TwinFail("FreeTensor of a tensor this queue did not allocate, or freed twice");
    free_[id] = true;
  }

 private:
  std::deque<int32_t> queued_;
};

template <TPosition POS>
class TBuf : public TwinBufferSet {
 public:
  template <typename T>
  LocalTensor<T> Get() {
    if (bufs_.empty()) TwinFail("TBuf::Get before InitBuffer");
    return LocalTensor<T>(reinterpret_cast<T*>(bufs_[0]), bytes_ / sizeof(T), POS, 0);
  }
};

class TPipe {
 public:
  TPipe() {
    for (size_t s = 0; s < spaces_.size(); ++s)
      spaces_[s].reset(new uint8_t[SpaceCapacity(static_cast<TwinSpace>(s))]());
  }
  template <TPosition POS, int32_t DEPTH>
  void InitBuffer(TQue<POS, DEPTH>& que, uint8_t num, uint32_t len) {
    que.Bind(POS, Carve(SpaceOf(POS), num, len), len);
  }
  template <TPosition POS>
  void InitBuffer(TBuf<POS>& buf, uint32_t len) {
    buf.Bind(POS, Carve(SpaceOf(POS), 1, len), len);
  }
  // Bytes handed out per space: lets a test compare with ascend-plan-memory's plan.
  uint32_t Used(TwinSpace s) const { return used_[static_cast<size_t>(s)]; }

 private:
  std::vector<uint8_t*> Carve(TwinSpace s, uint32_t num, uint32_t len) {
    uint32_t aligned = (len + 31u) / 32u * 32u;
    uint32_t& used = used_[static_cast<size_t>(s)];
    if (static_cast<uint64_t>(used) + static_cast<uint64_t>(aligned) * num > SpaceCapacity(s)) {
      char msg[160];
      std::snprintf(msg, sizeof msg, "InitBuffer needs %u x %u bytes of %s but only %u of %u are left", num,
                    aligned, SpaceName(s), SpaceCapacity(s) - used, SpaceCapacity(s));
      TwinFail(msg);
    }
    std::vector<uint8_t*> out;
    for (uint32_t i = 0; i < num; ++i) {
      out.push_back(spaces_[static_cast<size_t>(s)].get() + used);
      used += aligned;
    }
    return out;
  }
  std::array<std::unique_ptr<uint8_t[]>, static_cast<size_t>(TwinSpace::COUNT)> spaces_;
  std::array<uint32_t, static_cast<size_t>(TwinSpace::COUNT)> used_{};
};

// Pipe synchronisation: each twin core runs its stages in program order, so
// flags and barriers have nothing to wait for; they exist so emitted code compiles.
enum class HardEvent { MTE2_V, V_MTE3, MTE3_V, MTE2_MTE1, MTE1_M, M_FIX, FIX_M, MTE3_MTE2 };
enum pipe_t { PIPE_V, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_M, PIPE_FIX, PIPE_ALL };
template <HardEvent E>
inline void SetFlag(int32_t) {}
template <HardEvent E>
inline void WaitFlag(int32_t) {}
template <pipe_t P>
inline void PipeBarrier() {}
// Mix kernels: a twin block runs its cube part and then its vector part on one thread, so the
// AIC -> AIV handshake is already satisfied.
template <uint8_t MODE, pipe_t P>
inline void CrossCoreSetFlag(int32_t) {}
inline void CrossCoreWaitFlag(int32_t) {}

}  // namespace AscendC
