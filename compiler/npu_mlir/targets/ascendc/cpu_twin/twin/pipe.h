// TPipe / TQue / TBuf of the CPU twin: per-core local memory with capacity checks, and queues
// that enforce the AllocTensor -> EnQue -> DeQue -> FreeTensor discipline. A queue is also the
// synchronisation a real core gets from it: EnQue/DeQue orders the position's consumer pipe
// after its producer (VECIN: MTE2 -> V, VECOUT: V -> MTE3, A1/B1/C1: MTE2 -> MTE1, A2/B2:
// MTE1 -> M, C2: MTE1 -> M, CO1: M -> FIX), FreeTensor/AllocTensor the producer after the consumer.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

namespace AscendC {

namespace twin {

// The local memory of the calling thread's core, created on first use.
inline Space& CoreSpace(TwinSpace s) {
  static thread_local std::array<Space*, static_cast<size_t>(TwinSpace::COUNT)> cache{};
  static thread_local uint64_t owner = 0;
  Core& c = CurrentCore();
  if (owner != c.id) {
    cache = {};
    owner = c.id;
  }
  Space*& slot = cache[static_cast<size_t>(s)];
  if (slot == nullptr) {
    for (Space* sp : c.spaces)
      if (!sp->borrowed && sp->name == SpaceName(s)) slot = sp;
  }
  if (slot == nullptr) {
    auto* sp = new Space();
    sp->name = SpaceName(s);
    sp->bytes = SpaceCapacity(s);
    sp->mem.reset(new uint8_t[sp->bytes]());
    sp->blocks.resize(sp->bytes / 32);
    c.spaces.push_back(sp);
    c.owned.emplace_back(sp);
    slot = sp;
  }
  return *slot;
}

inline uint8_t* LocalAddress(TPosition pos, uint32_t addr, uint64_t bytes, const TwinLoc& loc) {
  Space& s = CoreSpace(SpaceOf(pos));
  if (addr % 32 != 0 || uint64_t{addr} + bytes > s.bytes) {
    char msg[200];
    std::snprintf(msg, sizeof msg, "LocalTensor(pos, addr %u, %llu bytes): outside the %u bytes of %s, or not 32-byte aligned",
                  addr, static_cast<unsigned long long>(bytes), static_cast<unsigned>(s.bytes), s.name);
    TwinFailAt(loc, msg);
  }
  return s.mem.get() + addr;
}

// The space of a C-API local array (`__cbuf__ half a[N]`, `__ca__`, `__cb__`, `__cc__`) that `bytes`
// from `p` on belong to. The array is the kernel's own memory; the twin tracks it as a region of
// buffer `kind` from the first instruction that addresses it, grown as later ones reach further
// (and merged with a neighbouring array of the same kind it grows into), so the pipe checker and
// the range checks see C-API cube kernels as they see the class API's. The arrays of one kind
// together must fit the buffer.
inline Space& AdoptLocal(TwinSpace kind, const void* p, uint64_t bytes, const char* what, const TwinLoc& loc) {
  Core& c = CurrentCore();
  uint8_t* b = static_cast<uint8_t*>(const_cast<void*>(p));
  const uint64_t want = (bytes + 31u) / 32u * 32u;
  Space* home = nullptr;
  for (Space* sp : c.spaces) {
    if (b < sp->mem.get() || b >= sp->mem.get() + sp->bytes) continue;
    if (sp->name != SpaceName(kind)) {
      char msg[200];
      std::snprintf(msg, sizeof msg, "%s: the address is in %s, the instruction takes %s here", what, sp->name,
                    SpaceName(kind));
      TwinFailAt(loc, msg);
    }
    home = sp;
  }
  if (home != nullptr && (!home->borrowed || b + want <= home->mem.get() + home->bytes)) return *home;
  if (home == nullptr) {
    auto* sp = new Space();
    sp->name = SpaceName(kind);
    sp->borrowed = true;
    sp->mem.reset(b);
    c.spaces.push_back(sp);
    c.owned.emplace_back(sp);
    home = sp;
  }
  // Grow to cover [p, p + want), absorbing the same-kind arrays it reaches; stop short of another kind's.
  uint8_t* end = b + want;
  for (size_t i = 0; i < c.spaces.size(); ++i) {
    Space* other = c.spaces[i];
    uint8_t* lo = other->mem.get();
    if (other == home || lo < home->mem.get() || lo >= end) continue;
    if (!other->borrowed || other->name != home->name) {
      end = lo;
      continue;
    }
    uint8_t* oend = lo + other->bytes;
    if (oend > end) end = oend;
    home->blocks.resize((lo - home->mem.get()) / 32u);
    home->blocks.insert(home->blocks.end(), other->blocks.begin(), other->blocks.end());
    c.spaces.erase(c.spaces.begin() + static_cast<std::ptrdiff_t>(i));
    other->bytes = 0;  // its memory and blocks now belong to home
    i = static_cast<size_t>(-1);  // rescan: the grown region may reach further arrays
  }
  home->bytes = static_cast<uint32_t>(end - home->mem.get());
  home->blocks.resize(home->bytes / 32u);
  uint64_t total = 0;
  for (Space* sp : c.spaces)
    if (sp->borrowed && sp->name == home->name) total += sp->bytes;
  if (total > SpaceCapacity(kind)) {
    char msg[200];
    std::snprintf(msg, sizeof msg, "%s: the kernel's %s arrays take %llu bytes, more than the %u bytes of %s", what,
                  home->name, static_cast<unsigned long long>(total), SpaceCapacity(kind), home->name);
    TwinFailAt(loc, msg);
  }
  return *home;
}

// Byte offset of a local address within its physical buffer (-1 outside every local buffer).
inline int64_t LocalOffset(const void* p) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  for (Space* s : CurrentCore().spaces)
    if (b >= s->mem.get() && b < s->mem.get() + s->bytes) return b - s->mem.get();
  return -1;
}

// The alignment an instruction needs of a local operand's start address.
inline void CheckLocalAlign(const void* p, uint32_t align, const char* what, const TwinLoc& loc) {
  int64_t off = LocalOffset(p);
  if (off >= 0 && off % align != 0) {
    char msg[200];
    std::snprintf(msg, sizeof msg, "%s starts at local byte offset %lld, which is not %u-byte aligned", what,
                  static_cast<long long>(off), align);
    TwinFailAt(loc, msg);
  }
}

struct QueuePipes {
  int producer, consumer;
};
constexpr QueuePipes PipesOfPosition(TPosition pos) {
  switch (pos) {
    case TPosition::VECIN: return {MTE2, V};
    case TPosition::VECOUT: return {V, MTE3};
    case TPosition::A1:
    case TPosition::B1:
    case TPosition::C1: return {MTE2, MTE1};
    case TPosition::A2:
    case TPosition::B2: return {MTE1, M};
    case TPosition::CO1: return {M, FIX};
    case TPosition::CO2: return {FIX, MTE3};
    case TPosition::C2: return {MTE1, M};            // the bias table: DataCopy from L1, read by Mmad
    case TPosition::C2PIPE2GM: return {FIX, FIX};    // the fixpipe buffer: filled and read by Fixpipe
    default: return {V, V};
  }
}

}  // namespace twin

// Buffers of one queue or TBuf, carved out of a TPipe's space at InitBuffer.
class TwinBufferSet {
 public:
  void Bind(TPosition pos, std::vector<uint8_t*> bufs, uint32_t bytes) {
    pos_ = pos;
    bufs_ = std::move(bufs);
    bytes_ = bytes;
    free_.assign(bufs_.size(), true);
    freed_.assign(bufs_.size(), twin::Clock{});
  }
  TPosition Position() const { return pos_; }
  uint32_t Bytes() const { return bytes_; }

 protected:
  TPosition pos_ = TPosition::VECCALC;
  std::vector<uint8_t*> bufs_;
  std::vector<bool> free_;
  std::vector<twin::Clock> freed_;  // the consumer's clock at FreeTensor, per buffer
  uint32_t bytes_ = 0;
};

template <TPosition POS, int32_t DEPTH = 1>
class TQue : public TwinBufferSet {
  static constexpr twin::QueuePipes kPipes = twin::PipesOfPosition(POS);

 public:
  template <typename T>
  LocalTensor<T> AllocTensor(TwinLoc loc = {}) {
    if (bufs_.empty()) TwinFailAt(loc, "AllocTensor on a queue that InitBuffer never set up");
    for (size_t i = 0; i < bufs_.size(); ++i) {
      if (free_[i]) {
        free_[i] = false;
        twin::Join(twin::CurrentCore().clock[kPipes.producer], freed_[i]);
        return LocalTensor<T>(reinterpret_cast<T*>(bufs_[i]), bytes_ / sizeof(T), POS, static_cast<int32_t>(i));
      }
    }
    TwinFailAt(loc, "AllocTensor with every buffer of the queue in use (missing FreeTensor?)");
  }
  template <typename T>
  bool EnQue(const LocalTensor<T>& t, TwinLoc loc = {}) {
    if (t.BufferId() < 0 || t.GetPosition() != POS) TwinFailAt(loc, "EnQue of a tensor from another queue");
    if (queued_.size() >= bufs_.size())
      TwinFailAt(loc, "EnQue on a full queue (more tensors queued than its depth)");
    queued_.push_back({t.BufferId(), twin::CurrentCore().clock[kPipes.producer]});
    return true;
  }
  template <typename T>
  LocalTensor<T> DeQue(TwinLoc loc = {}) {
    if (queued_.empty()) TwinFailAt(loc, "DeQue on an empty queue (EnQue missing in the previous stage)");
    Entry e = queued_.front();
    queued_.pop_front();
    twin::Join(twin::CurrentCore().clock[kPipes.consumer], e.clock);
    return LocalTensor<T>(reinterpret_cast<T*>(bufs_[e.id]), bytes_ / sizeof(T), POS, e.id);
  }
  template <typename T>
  void FreeTensor(const LocalTensor<T>& t, TwinLoc loc = {}) {
    int32_t id = t.BufferId();
    if (id < 0 || static_cast<size_t>(id) >= bufs_.size() || free_[id])
      TwinFailAt(loc, "FreeTensor of a tensor this queue did not allocate, or freed twice");
    free_[id] = true;
    freed_[id] = twin::CurrentCore().clock[kPipes.consumer];
  }
  bool VacantInQue() const { return queued_.size() < bufs_.size(); }
  bool HasTensorInQue() const { return !queued_.empty(); }
  int32_t GetTensorCountInQue() const { return static_cast<int32_t>(queued_.size()); }

 private:
  struct Entry {
    int32_t id;
    twin::Clock clock;  // the producer's clock at EnQue
  };
  std::deque<Entry> queued_;
};

// A fixed buffer: no queue, so no synchronisation comes with it (the kernel adds the flags).
template <TPosition POS>
class TBuf : public TwinBufferSet {
 public:
  template <typename T>
  LocalTensor<T> Get(TwinLoc loc = {}) {
    if (bufs_.empty()) TwinFailAt(loc, "TBuf::Get before InitBuffer");
    return LocalTensor<T>(reinterpret_cast<T*>(bufs_[0]), bytes_ / sizeof(T), POS, 0);
  }
  template <typename T>
  LocalTensor<T> Get(uint32_t len, TwinLoc loc = {}) {
    if (uint64_t{len} * sizeof(T) > bytes_) TwinFailAt(loc, "TBuf::Get(len) asks for more than InitBuffer gave");
    LocalTensor<T> t = Get<T>(loc);
    t.SetSize(len);
    return t;
  }
  template <typename T>
  LocalTensor<T> AllocTensor(TwinLoc loc = {}) { return Get<T>(loc); }
  template <typename T>
  void FreeTensor(const LocalTensor<T>&) {}
};

class TPipe {
 public:
  TPipe() { current() = this; }
  ~TPipe() {
    if (current() == this) current() = nullptr;
  }
  TPipe(const TPipe&) = delete;
  TPipe& operator=(const TPipe&) = delete;

  template <TPosition POS, int32_t DEPTH>
  void InitBuffer(TQue<POS, DEPTH>& que, uint8_t num, uint32_t len, TwinLoc loc = {}) {
    que.Bind(POS, Carve(SpaceOf(POS), num, len, loc), len);
  }
  template <TPosition POS>
  void InitBuffer(TBuf<POS>& buf, uint32_t len, TwinLoc loc = {}) {
    buf.Bind(POS, Carve(SpaceOf(POS), 1, len, loc), len);
  }
  // Bytes handed out per space: lets a test compare with ascend-plan-memory's plan.
  uint32_t Used(TwinSpace s) const { return used_[static_cast<size_t>(s)]; }
  void Reset() { used_ = {}; }
  void Destroy() { used_ = {}; }
  // Event ids for SetFlag/WaitFlag pairs the kernel writes by hand.
  template <HardEvent E>
  int32_t FetchEventID() { return nextEvent_++ % 8; }
  template <HardEvent E>
  int32_t AllocEventID() { return nextEvent_++ % 8; }
  template <HardEvent E>
  void ReleaseEventID(int32_t) {}

  static TPipe*& current() {
    static thread_local TPipe* pipe = nullptr;
    return pipe;
  }

 private:
  std::vector<uint8_t*> Carve(TwinSpace s, uint32_t num, uint32_t len, const TwinLoc& loc) {
    uint32_t aligned = (len + 31u) / 32u * 32u;
    uint32_t& used = used_[static_cast<size_t>(s)];
    if (static_cast<uint64_t>(used) + static_cast<uint64_t>(aligned) * num > SpaceCapacity(s)) {
      char msg[160];
      std::snprintf(msg, sizeof msg, "InitBuffer needs %u x %u bytes of %s but only %u of %u are left", num,
                    aligned, SpaceName(s), SpaceCapacity(s) - used, SpaceCapacity(s));
      TwinFailAt(loc, msg);
    }
    uint8_t* base = twin::CoreSpace(s).mem.get();
    std::vector<uint8_t*> out;
    for (uint32_t i = 0; i < num; ++i) {
      out.push_back(base + used);
      used += aligned;
    }
    return out;
  }
  std::array<uint32_t, static_cast<size_t>(TwinSpace::COUNT)> used_{};
  int32_t nextEvent_ = 0;
};

inline TPipe* GetTPipePtr() { return TPipe::current(); }

// Static-tensor programming: LocalTensors carved straight out of one physical buffer, no TPipe /
// TQue (so no synchronisation comes with them: the kernel's SetFlag / WaitFlag must order the pipes).
enum class Hardware : uint8_t { GM, UB, L1, L0A, L0B, L0C, BIAS, FIXBUF, MAX };

template <Hardware hard = Hardware::UB>
class LocalMemAllocator {
  static constexpr TwinSpace kSpace = hard == Hardware::L1 ? TwinSpace::L1
                                      : hard == Hardware::L0A ? TwinSpace::L0A
                                      : hard == Hardware::L0B ? TwinSpace::L0B
                                      : hard == Hardware::L0C ? TwinSpace::L0C
                                      : hard == Hardware::BIAS ? TwinSpace::BT
                                      : hard == Hardware::FIXBUF ? TwinSpace::FB
                                                               : TwinSpace::UB;
  static constexpr TPosition kPosition = hard == Hardware::L1 ? TPosition::A1
                                         : hard == Hardware::L0A ? TPosition::A2
                                         : hard == Hardware::L0B ? TPosition::B2
                                         : hard == Hardware::L0C ? TPosition::CO1
                                         : hard == Hardware::BIAS ? TPosition::C2
                                         : hard == Hardware::FIXBUF ? TPosition::C2PIPE2GM
                                                                  : TPosition::VECCALC;

 public:
  static_assert(hard != Hardware::GM && hard != Hardware::MAX,
                "LocalMemAllocator: the twin models UB, L1, L0A, L0B, L0C, BIAS and FIXBUF");
  uint32_t GetCurAddr() const { return used_; }
  template <class DataType, uint32_t tileSize>
  LocalTensor<DataType> Alloc(TwinLoc loc = {}) { return Take<DataType>(kPosition, tileSize, loc); }
  template <TPosition pos, class DataType, uint32_t tileSize>
  LocalTensor<DataType> Alloc(TwinLoc loc = {}) { return Take<DataType>(pos, tileSize, loc); }
  template <class DataType>
  LocalTensor<DataType> Alloc(uint32_t tileSize, TwinLoc loc = {}) { return Take<DataType>(kPosition, tileSize, loc); }
  template <TPosition pos, class DataType>
  LocalTensor<DataType> Alloc(uint32_t tileSize, TwinLoc loc = {}) { return Take<DataType>(pos, tileSize, loc); }

 private:
  template <class DataType>
  LocalTensor<DataType> Take(TPosition pos, uint32_t elems, const TwinLoc& loc) {
    if (SpaceOf(pos) != kSpace) TwinFailAt(loc, "LocalMemAllocator::Alloc position is not in the allocator's buffer");
    const uint32_t bytes = (elems * static_cast<uint32_t>(sizeof(DataType)) + 31u) / 32u * 32u;
    if (uint64_t{used_} + bytes > SpaceCapacity(kSpace)) {
      char msg[160];
      std::snprintf(msg, sizeof msg, "LocalMemAllocator::Alloc needs %u bytes of %s but only %u of %u are left", bytes,
                    SpaceName(kSpace), SpaceCapacity(kSpace) - used_, SpaceCapacity(kSpace));
      TwinFailAt(loc, msg);
    }
    auto* p = reinterpret_cast<DataType*>(twin::CoreSpace(kSpace).mem.get() + used_);
    used_ += bytes;
    return LocalTensor<DataType>(p, elems, pos, -1);
  }
  uint32_t used_ = 0;
};

}  // namespace AscendC
