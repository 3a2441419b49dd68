// GlobalTensor / LocalTensor and the positions (memory spaces) of the CPU twin.
#pragma once

#include <cstdint>

namespace AscendC {

enum class TPosition { GM, VECIN, VECOUT, VECCALC, A1, A2, B1, B2, C1, C2, CO1, CO2, TSCM, C2PIPE2GM };
using QuePosition = TPosition;

// Physical memory a position lives in, with its 910B capacity (DESIGN.md section 3).
enum class TwinSpace { UB = 0, L1, L0A, L0B, L0C, BT, FB, COUNT };  // BT: the bias table, FB: the fixpipe buffer

constexpr TwinSpace SpaceOf(TPosition pos) {
  switch (pos) {
    case TPosition::A1:
    case TPosition::B1:
    case TPosition::C1:
    case TPosition::TSCM: return TwinSpace::L1;
    case TPosition::C2: return TwinSpace::BT;
    case TPosition::C2PIPE2GM: return TwinSpace::FB;
    case TPosition::A2: return TwinSpace::L0A;
    case TPosition::B2: return TwinSpace::L0B;
    case TPosition::CO1: return TwinSpace::L0C;
    default: return TwinSpace::UB;
  }
}

constexpr uint32_t SpaceCapacity(TwinSpace s) {
  switch (s) {
    case TwinSpace::UB: return 192 * 1024;
    case TwinSpace::L1: return 512 * 1024;
    case TwinSpace::L0A: return 64 * 1024;
    case TwinSpace::L0B: return 64 * 1024;
    case TwinSpace::L0C: return 128 * 1024;
    case TwinSpace::BT: return 1024;
    case TwinSpace::FB: return 2048;  // the quantization parameters' part of the 910B fixpipe buffer
    default: return 0;
  }
}

constexpr const char* SpaceName(TwinSpace s) {
  switch (s) {
    case TwinSpace::UB: return "UB";
    case TwinSpace::L1: return "L1";
    case TwinSpace::L0A: return "L0A";
    case TwinSpace::L0B: return "L0B";
    case TwinSpace::L0C: return "L0C";
    case TwinSpace::BT: return "BT";
    case TwinSpace::FB: return "FB";
    default: return "?";
  }
}

template <typename T>
class GlobalTensor {
 public:
  void SetGlobalBuffer(__gm__ T* buffer, uint64_t size = 0) {
    ptr_ = buffer;
    size_ = size;
  }
  GlobalTensor operator[](uint64_t offset) const {
    GlobalTensor t;
    t.ptr_ = ptr_ + offset;
    t.size_ = size_ > offset ? size_ - offset : 0;
    return t;
  }
  // Scalar-unit access to global memory (PIPE_S), ordered against this core's copies like any pipe.
  T GetValue(uint64_t i, TwinLoc loc = {}) const {
    twin::Op(twin::S, loc, "GlobalTensor::GetValue").ReadGm(ptr_ + i, sizeof(T));
    twin::ScalarDone();
    return ptr_[i];
  }
  void SetValue(uint64_t i, T v, TwinLoc loc = {}) const {  // a handle: constness is not the data's
    twin::Op(twin::S, loc, "GlobalTensor::SetValue").WriteGm(ptr_ + i, sizeof(T));
    twin::ScalarDone();
    ptr_[i] = v;
  }
  T TwinGet(uint64_t i) const { return ptr_[i]; }
  void TwinSet(uint64_t i, T v) const { ptr_[i] = v; }
  T* GetPhyAddr() const { return ptr_; }
  uint64_t GetSize() const { return size_; }

 private:
  T* ptr_ = nullptr;
  uint64_t size_ = 0;
};

namespace twin {
// `bytes` at byte address `addr` of this core's buffer of `pos` (defined with the buffers, twin/pipe.h).
uint8_t* LocalAddress(TPosition pos, uint32_t addr, uint64_t bytes, const TwinLoc& loc);
}  // namespace twin

template <typename T>
class LocalTensor {
 public:
  LocalTensor() = default;
  LocalTensor(T* ptr, uint32_t size, TPosition pos, int32_t bufId) : ptr_(ptr), size_(size), pos_(pos), bufId_(bufId) {}
  // Static-tensor programming: tileSize elements at byte address addr of pos's buffer.
  LocalTensor(TPosition pos, uint32_t addr, uint32_t tileSize, TwinLoc loc = {})
      : ptr_(reinterpret_cast<T*>(twin::LocalAddress(pos, addr, uint64_t{tileSize} * sizeof(T), loc))),
        size_(tileSize), pos_(pos) {}
  LocalTensor operator[](uint32_t offset) const {
    if (offset > size_) TwinFail("LocalTensor offset past the end of its buffer");
    return LocalTensor(ptr_ + offset, size_ - offset, pos_, bufId_);
  }
  template <typename U>
  LocalTensor<U> ReinterpretCast() const {
    return LocalTensor<U>(reinterpret_cast<U*>(ptr_), size_ * sizeof(T) / sizeof(U), pos_, bufId_);
  }
  // Scalar-unit access (PIPE_S): ordered after the pipe that wrote the element only by a flag.
  T GetValue(uint32_t i, TwinLoc loc = {}) const {
    TwinCheckIndex(i, loc);
    twin::Op(twin::S, loc, "GetValue").Read(ptr_ + i, sizeof(T));
    twin::ScalarDone();
    return ptr_[i];
  }
  void SetValue(uint32_t i, T v, TwinLoc loc = {}) const {
    TwinCheckIndex(i, loc);
    twin::Op(twin::S, loc, "SetValue").Write(ptr_ + i, sizeof(T));
    twin::ScalarDone();
    ptr_[i] = v;
  }
  // The twin's own element access inside an instruction (its pipe is checked once per instruction).
  T TwinGet(uint32_t i) const { return ptr_[i]; }
  void TwinSet(uint32_t i, T v) const { ptr_[i] = v; }
  uint32_t GetLength() const { return size_ * sizeof(T); }
  void SetSize(uint32_t size) { size_ = size; }
  T* GetPhyAddr() const { return ptr_; }
  uint32_t GetSize() const { return size_; }
  TPosition GetPosition() const { return pos_; }
  int32_t BufferId() const { return bufId_; }

 private:
  void TwinCheckIndex(uint32_t i, const TwinLoc& loc) const {
    if (i >= size_) TwinFailAt(loc, "GetValue/SetValue index past the end of the local tensor");
  }
  T* ptr_ = nullptr;
  uint32_t size_ = 0;  // elements
  TPosition pos_ = TPosition::VECCALC;
  int32_t bufId_ = -1;
};

// Checks that `count` elements fit in the local tensor: a kernel that overruns a buffer
// corrupts its neighbour on hardware, so the twin refuses it.
template <typename T>
inline void TwinCheckRangeAt(const LocalTensor<T>& t, uint64_t count, const char* op, const TwinLoc& loc) {
  if (count > t.GetSize()) {
    char msg[200];
    std::snprintf(msg, sizeof msg, "%s needs %llu elements of a local tensor that holds %u", op,
                  static_cast<unsigned long long>(count), t.GetSize());
    TwinFailAt(loc, msg);
  }
}

}  // namespace AscendC
