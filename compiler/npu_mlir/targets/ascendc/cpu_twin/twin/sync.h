// Pipe synchronisation of the CPU twin, checked.
//
// An AI core issues instructions in program order to independent pipes (S scalar, V vector,
// M cube, MTE1 L1->L0, MTE2 GM->local, MTE3 local->GM, FIX L0C->out) that run concurrently:
// a pipe that reads or overwrites local memory another pipe wrote (or is still reading) must be
// ordered after it by a queue (EnQue/DeQue, FreeTensor/AllocTensor), SetFlag/WaitFlag or
// PipeBarrier<PIPE_ALL>. The twin executes in program order, so the data is always right here;
// what it checks is that the ordering a real core needs is present. Each pipe keeps a vector
// clock of what it is known to be ordered after; every 32-byte block of local memory remembers
// its last writer and its last reader per pipe. A missing synchronisation aborts with both
// source locations and the flag that would order them.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

// The pipes, named as the compiler's builtin enum names them (global scope, as in AscendC).
enum pipe_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_MTE4, PIPE_MTE5, PIPE_V2,
              PIPE_FIX };
enum event_t { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };

namespace AscendC {

// Call-site location of a twin API call: a defaulted trailing parameter, so the message names
// the kernel's line, not the twin's.
struct TwinLoc {
  const char* file;
  int line;
  TwinLoc(const char* f = __builtin_FILE(), int l = __builtin_LINE()) : file(f), line(l) {}
};

[[noreturn]] inline void TwinFailAt(const TwinLoc& loc, const char* what) {
  std::fprintf(stderr, "ascendc cpu twin: %s:%d: %s\n", loc.file, loc.line, what);
  std::abort();
}

namespace twin {

// Tracked pipes, in clock order.
enum Pipe : int { S = 0, V, M, MTE1, MTE2, MTE3, FIX, PIPES };
constexpr const char* kPipeName[PIPES] = {"S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX"};

constexpr int PipeOf(pipe_t p) {
  switch (p) {
    case PIPE_S: return S;
    case PIPE_V: return V;
    case PIPE_M: return M;
    case PIPE_MTE1: return MTE1;
    case PIPE_MTE2: return MTE2;
    case PIPE_MTE3: return MTE3;
    case PIPE_FIX: return FIX;
    default: return -1;
  }
}

using Clock = std::array<uint32_t, PIPES>;

struct Block {
  int8_t writer = -1;
  uint32_t wseq = 0;
  TwinLoc wloc{"", 0};
  const char* wop = "";
  Clock rseq{};
  std::array<TwinLoc, PIPES> rloc{};
  std::array<const char*, PIPES> rop{};
};

// One core's physical local memories and their shadow state. A borrowed space is a local array a
// C-API kernel declared (`__cbuf__ half a[N]`): its memory is the kernel's, so it is not freed here.
struct Space {
  const char* name = "";
  std::unique_ptr<uint8_t[]> mem;
  uint32_t bytes = 0;
  std::vector<Block> blocks;
  bool borrowed = false;
  Space() = default;
  Space(const Space&) = delete;
  Space& operator=(const Space&) = delete;
  ~Space() {
    if (borrowed) (void)mem.release();
  }
};

// A global-memory access of one core still to be ordered against the core's other pipes.
struct GmAccess {
  uintptr_t lo, hi;
  int8_t pipe;
  bool write;
  uint32_t seq;
  TwinLoc loc;
  const char* op;
};

inline uint64_t NextCoreId() {
  static std::atomic<uint64_t> next{0};
  return ++next;
}

// The Load3Dv2 repeat registers (SetLoadDataRepeat / asc_set_l13d_rpt): one iteration by default.
struct Load3dRepeat {
  uint16_t stride = 0;
  uint16_t times = 1;
  uint8_t mode = 0;  // 0: along the img2col matrix's height (m), 1: along its width (k)
};

struct Core {
  uint64_t id = NextCoreId();  // identifies this core state to per-thread caches (addresses get reused)
  std::array<Clock, PIPES> clock{};            // clock[p][q]: q's ops p is ordered after
  std::array<std::array<Clock, 8>, PIPES * PIPES> flags{};  // SetFlag snapshots [src*PIPES+dst][event]
  std::array<std::array<bool, 8>, PIPES * PIPES> flagSet{};
  std::vector<Space*> spaces;
  std::vector<std::unique_ptr<Space>> owned;
  std::vector<GmAccess> gm;
  // The Fixpipe registers the C API sets before asc_copy_l0c2gm (asc_set_l0c_copy_params / _prequant).
  uint16_t fixNdNum = 1, fixSrcNdStride = 0, fixDstNdStride = 0;
  uint64_t fixQuantScalar = 0;
  // The img2col registers the C API sets before a 3D asc_copy_l12l0a: the feature map (W in bits
  // 0-15, H in 16-31, pads left/right/top/bottom in the bytes above), the pad value's bits, and
  // the L1 boundary in bytes (0: none).
  uint64_t l13dFmatrix = 0, l13dPadding = 0, l13dSize = 0;
  Load3dRepeat load3dRepeat;
  // The bias-table array the C API's last asc_copy_l12bt filled (0: none), which asc_mmad with
  // c_matrix_source reads (twin/../c_api/asc_cube.h says why the twin keeps it here).
  uint64_t capiBiasTable = 0;
  // SetFixPipeConfig's quantization tensor in the fixpipe buffer (the V* quantPre modes read it).
  uint64_t* fixQuantTable = nullptr;
  uint32_t fixQuantWords = 0;
};
inline thread_local std::unique_ptr<Core> core;

inline Core& CurrentCore() {
  if (!core) core.reset(new Core());
  return *core;
}
// A fresh core state for the block a thread is about to run.
inline void ResetCore() { core.reset(new Core()); }

inline void Join(Clock& into, const Clock& from) {
  for (int i = 0; i < PIPES; ++i)
    if (from[i] > into[i]) into[i] = from[i];
}

inline const char* EventHint(int from, int to) {
  static thread_local char buf[96];
  std::snprintf(buf, sizeof buf, "SetFlag/WaitFlag<HardEvent::%s_%s>", kPipeName[from], kPipeName[to]);
  return buf;
}

// One instruction on one pipe: its sequence number, then the memory it reads and writes.
class Op {
 public:
  Op(int pipe, const TwinLoc& loc, const char* name) : pipe_(pipe), loc_(loc), name_(name) {
    Core& c = CurrentCore();
    seq_ = ++c.clock[pipe][pipe];
  }
  void Read(const void* p, uint64_t bytes) const { Touch(p, bytes, false); }
  void Write(const void* p, uint64_t bytes) const { Touch(p, bytes, true); }
  // Global memory, ordered like local memory between the pipes of this core (across cores the
  // kernel's cross-core flags, SyncAll or the launch order it).
  void ReadGm(const void* p, uint64_t bytes) const { TouchGm(p, bytes, false); }
  void WriteGm(const void* p, uint64_t bytes) const { TouchGm(p, bytes, true); }

 private:
  void Touch(const void* p, uint64_t bytes, bool write) const {
    if (bytes == 0) return;
    Core& c = CurrentCore();
    const uint8_t* b = static_cast<const uint8_t*>(p);
    for (Space* s : c.spaces) {
      if (b < s->mem.get() || b >= s->mem.get() + s->bytes) continue;
      if (block.mix && (std::strcmp(s->name, "UB") == 0) != (block.core == CoreType::AIV)) {
        char msg[200];
        std::snprintf(msg, sizeof msg, "%s touches %s, which the %s of a mix launch does not have (guard it with %s)",
                      name_, s->name, block.core == CoreType::AIV ? "vector core" : "cube core",
                      block.core == CoreType::AIV ? "ASCEND_IS_AIC" : "ASCEND_IS_AIV");
        TwinFailAt(loc_, msg);
      }
      uint64_t first = static_cast<uint64_t>(b - s->mem.get()) / 32, last = (static_cast<uint64_t>(b - s->mem.get()) + bytes - 1) / 32;
      if (last >= s->blocks.size()) last = s->blocks.size() - 1;
      for (uint64_t i = first; i <= last; ++i) Check(c, *s, i, write);
      return;
    }
  }
  void TouchGm(const void* p, uint64_t bytes, bool write) const {
    if (bytes == 0) return;
    Core& c = CurrentCore();
    const uintptr_t lo = reinterpret_cast<uintptr_t>(p), hi = lo + bytes;
    const Clock& mine = c.clock[pipe_];
    size_t keep = 0;
    for (size_t i = 0; i < c.gm.size(); ++i) {
      const GmAccess& e = c.gm[i];
      if (e.pipe != pipe_ && e.lo < hi && lo < e.hi && mine[e.pipe] < e.seq && (e.write || write)) {
        char msg[512];
        std::snprintf(msg, sizeof msg,
                      "%s (PIPE_%s) %s global memory that %s (PIPE_%s) at %s:%d %s, with no %s -> %s "
                      "synchronization between them (SetFlag/WaitFlag<HardEvent::%s_%s> or PipeBarrier<PIPE_ALL>)",
                      name_, kPipeName[pipe_], write ? "writes" : "reads", e.op, kPipeName[e.pipe], e.loc.file,
                      e.loc.line, e.write ? "wrote" : "is still reading", kPipeName[e.pipe], kPipeName[pipe_],
                      kPipeName[e.pipe], kPipeName[pipe_]);
        TwinFailAt(loc_, msg);
      }
      // An access every other pipe is ordered after can no longer race: drop it.
      bool settled = true;
      for (int q = 0; q < PIPES && settled; ++q) settled = q == e.pipe || c.clock[q][e.pipe] >= e.seq;
      if (!settled) c.gm[keep++] = e;
    }
    c.gm.resize(keep);
    if (pipe_ == S && !write) return;  // a scalar read completes before the next instruction issues
    c.gm.push_back(GmAccess{lo, hi, static_cast<int8_t>(pipe_), write, seq_, loc_, name_});
  }
  void Check(Core& c, Space& s, uint64_t i, bool write) const {
    Block& blk = s.blocks[i];
    const Clock& mine = c.clock[pipe_];
    if (blk.writer >= 0 && blk.writer != pipe_ && mine[blk.writer] < blk.wseq)
      Report(s, i, write ? "overwrites" : "reads", "written", blk.writer, blk.wloc, blk.wop);
    if (write) {
      for (int r = 0; r < PIPES; ++r)
        if (r != pipe_ && blk.rseq[r] > mine[r]) Report(s, i, "overwrites", "still being read", r, blk.rloc[r], blk.rop[r]);
      blk.writer = static_cast<int8_t>(pipe_);
      blk.wseq = seq_;
      blk.wloc = loc_;
      blk.wop = name_;
    } else if (pipe_ != S) {  // a scalar read completes before the next instruction issues
      blk.rseq[pipe_] = seq_;
      blk.rloc[pipe_] = loc_;
      blk.rop[pipe_] = name_;
    }
  }
  [[noreturn]] void Report(const Space& s, uint64_t i, const char* verb, const char* state, int other,
                           const TwinLoc& oloc, const char* oop) const {
    char msg[512];
    std::snprintf(msg, sizeof msg,
                  "%s (PIPE_%s) %s %s bytes [%llu, %llu) %s by %s (PIPE_%s) at %s:%d, with no %s -> %s "
                  "synchronization between them (EnQue/DeQue through a queue, %s, or PipeBarrier<PIPE_ALL>)",
                  name_, kPipeName[pipe_], verb, s.name, static_cast<unsigned long long>(i * 32),
                  static_cast<unsigned long long>(i * 32 + 32), state, oop, kPipeName[other], oloc.file, oloc.line,
                  kPipeName[other], kPipeName[pipe_], EventHint(other, pipe_));
    TwinFailAt(loc_, msg);
  }
  int pipe_;
  TwinLoc loc_;
  const char* name_;
  uint32_t seq_ = 0;
};

// A scalar instruction completes before the core issues the next one: every pipe is ordered after it.
inline void ScalarDone() {
  Core& c = CurrentCore();
  for (int p = 0; p < PIPES; ++p)
    if (c.clock[S][S] > c.clock[p][S]) c.clock[p][S] = c.clock[S][S];
}

inline void SignalFlag(int from, int to, int event, const TwinLoc& loc) {
  if (event < 0 || event > 7) TwinFailAt(loc, "SetFlag event id must be in [0, 7] (EVENT_ID0..EVENT_ID7)");
  Core& c = CurrentCore();
  c.flags[from * PIPES + to][event] = c.clock[from];
  c.flagSet[from * PIPES + to][event] = true;
}

inline void AwaitFlag(int from, int to, int event, const TwinLoc& loc) {
  if (event < 0 || event > 7) TwinFailAt(loc, "WaitFlag event id must be in [0, 7] (EVENT_ID0..EVENT_ID7)");
  Core& c = CurrentCore();
  if (!c.flagSet[from * PIPES + to][event]) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "WaitFlag<HardEvent::%s_%s>(%d) with no SetFlag before it: the core would hang",
                  kPipeName[from], kPipeName[to], event);
    TwinFailAt(loc, msg);
  }
  c.flagSet[from * PIPES + to][event] = false;
  Join(c.clock[to], c.flags[from * PIPES + to][event]);
}

inline void BarrierAll() {
  Core& c = CurrentCore();
  Clock all{};
  for (int p = 0; p < PIPES; ++p) Join(all, c.clock[p]);
  for (int p = 0; p < PIPES; ++p) {
    uint32_t own = c.clock[p][p];
    c.clock[p] = all;
    c.clock[p][p] = own;
  }
}

}  // namespace twin

// HardEvent::<SRC>_<DST>: the source pipe signals, the destination pipe waits.
enum class HardEvent : uint8_t {
#define TWIN_EVENTS(X)                                                                                     \
  X(MTE2_MTE1, MTE2, MTE1) X(MTE1_MTE2, MTE1, MTE2) X(MTE1_M, MTE1, M) X(M_MTE1, M, MTE1)                \
  X(MTE2_V, MTE2, V) X(V_MTE2, V, MTE2) X(MTE3_V, MTE3, V) X(V_MTE3, V, MTE3) X(M_V, M, V) X(V_M, V, M)   \
  X(V_V, V, V) X(MTE3_MTE1, MTE3, MTE1) X(MTE1_MTE3, MTE1, MTE3) X(MTE1_V, MTE1, V) X(MTE2_M, MTE2, M)    \
  X(M_MTE2, M, MTE2) X(V_MTE1, V, MTE1) X(M_FIX, M, FIX) X(FIX_M, FIX, M) X(MTE3_MTE2, MTE3, MTE2)        \
  X(MTE2_MTE3, MTE2, MTE3) X(S_V, S, V) X(V_S, V, S) X(S_MTE2, S, MTE2) X(MTE2_S, MTE2, S)               \
  X(S_MTE3, S, MTE3) X(MTE3_S, MTE3, S) X(MTE2_FIX, MTE2, FIX) X(FIX_MTE2, FIX, MTE2) X(FIX_S, FIX, S)    \
  X(M_S, M, S) X(FIX_MTE3, FIX, MTE3) X(MTE1_FIX, MTE1, FIX) X(FIX_MTE1, FIX, MTE1) X(FIX_FIX, FIX, FIX)
#define TWIN_ENUM(NAME, SRC, DST) NAME,
  TWIN_EVENTS(TWIN_ENUM)
#undef TWIN_ENUM
};

namespace twin {
struct EventPipes {
  int from, to;
};
constexpr EventPipes PipesOf(HardEvent e) {
  switch (e) {
#define TWIN_CASE(NAME, SRC, DST) \
  case HardEvent::NAME: return {SRC, DST};
    TWIN_EVENTS(TWIN_CASE)
#undef TWIN_CASE
  }
  return {S, S};
}
}  // namespace twin

template <HardEvent E>
inline void SetFlag(int32_t eventID, TwinLoc loc = {}) {
  constexpr twin::EventPipes p = twin::PipesOf(E);
  twin::SignalFlag(p.from, p.to, eventID, loc);
}
template <HardEvent E>
inline void WaitFlag(int32_t eventID, TwinLoc loc = {}) {
  constexpr twin::EventPipes p = twin::PipesOf(E);
  twin::AwaitFlag(p.from, p.to, eventID, loc);
}
// Orders the instructions of one pipe (they issue in order here, so only PIPE_ALL adds ordering
// between pipes: every pipe waits for every other).
template <pipe_t P>
inline void PipeBarrier() {
  if constexpr (P == PIPE_ALL) twin::BarrierAll();
}

}  // namespace AscendC
