// Launching blocks on the CPU twin, and what spans cores: block ids, mixed 1 cube : 2 vector
// launches with their cross-core flags, SyncAll, GM atomics, printf / ascendc_assert.
//
// Like CANN's CPU debug mode, every core of a launch is a host thread. AscendC::SetKernelMode
// chooses the cores: AIV_MODE (the default: blockDim vector cores), AIC_MODE (blockDim cube
// cores) or MIX_MODE (blockDim groups of 1 AIC + 2 AIV, as a __mix__(1, 2) kernel runs on a
// 910B). In MIX_MODE the twin refuses cube instructions on a vector core and vector
// instructions on a cube core.
#pragma once

#include <array>
#include <chrono>
#include <cstdlib>
#include <condition_variable>
#include <cstdarg>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace AscendC {

enum class KernelMode { MIX_MODE = 0, AIC_MODE, AIV_MODE, MIX_AIC_1_1 };
enum KernelMetaType {
  KERNEL_TYPE_AIV_ONLY,
  KERNEL_TYPE_AIC_ONLY,
  KERNEL_TYPE_MIX_AIV_1_0,
  KERNEL_TYPE_MIX_AIC_1_0,
  KERNEL_TYPE_MIX_AIC_1_1,
  KERNEL_TYPE_MIX_AIC_1_2,
  KERNEL_TYPE_AICORE,
  KERNEL_TYPE_VECTORCORE,
  KERNEL_TYPE_MIX_AICORE,
  KERNEL_TYPE_MIX_VECTOR_CORE,
  KERNEL_TYPE_MAX,
};

namespace twin {

inline KernelMode& Mode() {
  static KernelMode mode = KernelMode::AIV_MODE;
  return mode;
}

// State shared by the cores of one launch.
struct Launch {
  std::mutex mu;
  std::condition_variable cv;
  uint32_t aivCount = 0, aicCount = 0;
  // SyncAll: a generation barrier over the vector cores.
  uint32_t arrived = 0;
  uint64_t generation = 0;
  // Cross-core flags (CrossCoreSetFlag / CrossCoreWaitFlag): every core has a counter per flag that
  // its waits take from; a group's AIVs (toAiv) and AIC (toAic) counters, and the sets of each AIV
  // still waiting for its partner's (mode 2 towards the AIC, mode 1 towards each other).
  struct Group {
    uint32_t toAiv[2][16] = {};
    uint32_t toAic[16] = {};
    uint32_t pendingToAic[2][16] = {};
    uint32_t pendingPair[2][16] = {};
  };
  std::vector<Group> groups;
  // Mode 0: each core's sets not yet matched by every core of its type (AIV, AIC).
  std::vector<std::array<uint32_t, 16>> pendingAll[2];
  bool partial = false;  // one block of a launch (RunBlock): SyncAll cannot see the others
};
inline thread_local Launch* launch = nullptr;
// A core that runs outside a twin launch (the runtime's worker) still needs a flag store.
inline thread_local Launch::Group soloGroup;

enum class AtomicMode { None, Add, Max, Min };
inline thread_local AtomicMode atomic = AtomicMode::None;

// One lock for every GM atomic of the process: the cores of all launches share global memory.
inline std::mutex& GmMutex() {
  static std::mutex mu;
  return mu;
}

// Stores n elements to GM, applying the atomic mode SetAtomicAdd / Max / Min selected.
template <typename T>
inline void GmStore(T* dst, const T* src, uint64_t n) {
  if (atomic == AtomicMode::None) {
    std::memmove(dst, src, n * sizeof(T));
    return;
  }
  std::lock_guard<std::mutex> lock(GmMutex());
  for (uint64_t i = 0; i < n; ++i) {
    float a = static_cast<float>(dst[i]), b = static_cast<float>(src[i]);
    float v = atomic == AtomicMode::Add ? a + b : atomic == AtomicMode::Max ? std::max(a, b) : std::min(a, b);
    dst[i] = static_cast<T>(v);
  }
}

inline void RequireCore(CoreType want, const char* what, const TwinLoc& loc) {
  if (!block.mix || block.core == want) return;
  char msg[200];
  std::snprintf(msg, sizeof msg, "%s runs on the %s, but this is an %s of a mix launch (guard it with %s)", what,
                want == CoreType::AIC ? "cube core (AIC)" : "vector core (AIV)",
                block.core == CoreType::AIC ? "AIC" : "AIV", want == CoreType::AIC ? "ASCEND_IS_AIC" : "ASCEND_IS_AIV");
  TwinFailAt(loc, msg);
}

// How long a core may wait for another before the twin calls it a hang (NPU_TWIN_HANG_SECONDS,
// default 300: the twin computes far slower than a core, so a long wait is not yet a hang).
inline std::chrono::seconds HangTimeout() {
  static const long seconds = [] {
    const char* env = std::getenv("NPU_TWIN_HANG_SECONDS");
    long v = env ? std::atol(env) : 0;
    return v > 0 ? v : 300L;
  }();
  return std::chrono::seconds(seconds);
}

template <typename Pred>
inline void WaitUntil(std::unique_lock<std::mutex>& lock, Pred pred, const TwinLoc& loc, const char* what) {
  if (!launch->cv.wait_for(lock, HangTimeout(), pred)) TwinFailAt(loc, what);
}

}  // namespace twin

inline void SetKernelMode(KernelMode mode) { twin::Mode() = mode; }

inline int64_t GetBlockIdx() { return twin::block.idx; }
inline int64_t GetBlockNum() { return twin::block.num; }
inline int64_t GetSubBlockIdx() { return twin::block.sub; }
inline int64_t GetTaskRatio() { return twin::block.ratio; }
inline int64_t GetSubBlockNum() { return twin::block.mix && twin::block.core == twin::CoreType::AIV ? 2 : 1; }

// Resets the core's control registers at kernel start (mask, atomic mode).
inline void InitSocState() {
  twin::maskReg = twin::MaskRegister{};
  twin::atomic = twin::AtomicMode::None;
}

template <typename T>
inline void SetAtomicAdd() { twin::atomic = twin::AtomicMode::Add; }
template <typename T>
inline void SetAtomicMax() { twin::atomic = twin::AtomicMode::Max; }
template <typename T>
inline void SetAtomicMin() { twin::atomic = twin::AtomicMode::Min; }
inline void SetAtomicNone() { twin::atomic = twin::AtomicMode::None; }

// Hard synchronisation of every vector core of the launch (all must reach it).
template <bool isAIVOnly = true>
inline void SyncAll(TwinLoc loc = {}) {
  twin::BarrierAll();
  twin::Launch* l = twin::launch;
  if (l != nullptr && l->partial && twin::block.num > 1) l = nullptr;
  if (l == nullptr) {
    if (twin::block.num == 1) return;
    TwinFailAt(loc, "SyncAll needs every block resident at once: run the kernel through ICPU_RUN_KF or the "
                    "<<<>>> launch of npu-ascendc, not one block per runtime worker");
  }
  std::unique_lock<std::mutex> lock(l->mu);
  uint64_t gen = l->generation;
  if (++l->arrived == l->aivCount) {
    l->arrived = 0;
    ++l->generation;
    l->cv.notify_all();
    return;
  }
  twin::WaitUntil(lock, [&] { return l->generation != gen; }, loc,
                  "SyncAll timed out: not every vector core of the launch reached it (the launch would hang)");
}
template <bool isAIVOnly = true, typename W, typename U>
inline void SyncAll(const GlobalTensor<W>& gmWorkspace, const LocalTensor<U>& ubWorkspace, int32_t usedCores = 0,
                    TwinLoc loc = {}) {
  (void)gmWorkspace;
  (void)ubWorkspace;
  (void)usedCores;
  SyncAll<isAIVOnly>(loc);
}

// Cross-core flags (CrossCoreSetFlag / CrossCoreWaitFlag, flagId 0-10 on a 910B). Every core has
// a counter per flag; a wait blocks while its counter is zero, then lowers it. A set raises
// counters according to its modeId:
//   2: on the AIC, each AIV of its group; on an AIV, the AIC once both AIVs (the one of a 1:1 group)
//      have set;
//   1: both AIVs of the group, once both have set;
//   0: every core of the setter's type in the launch (all AIVs, or all AICs), once each has set.
// (The wait's own modeId does not matter: it waits on its core's counter.)
namespace twin {
inline void CheckFlagId(uint16_t flagId, const char* what, const TwinLoc& loc) {
  if (flagId > 10) {
    char msg[120];
    std::snprintf(msg, sizeof msg, "%s flagId %u: a 910B has cross-core flags 0-10", what, unsigned{flagId});
    TwinFailAt(loc, msg);
  }
}

// This core's counter of a flag: outside a launch, in a plain launch (one counter per block), or
// in a mix group.
inline uint32_t& FlagCounter(Launch* l, uint16_t f) {
  if (!l) return soloGroup.toAiv[0][f];
  if (!block.mix) return l->groups[block.idx].toAiv[0][f];
  Launch::Group& g = l->groups[block.group];
  return block.core == CoreType::AIV ? g.toAiv[block.sub][f] : g.toAic[f];
}

inline void RaiseFlag(uint32_t& counter, const TwinLoc& loc) {
  if (++counter > 15) TwinFailAt(loc, "CrossCoreSetFlag: more than 15 sets pending on one flag (the counter overflows)");
}

// Mode 0: the setter's set joins its type's round; a completed round raises every core of the type.
inline void SetFlagAll(Launch& l, uint16_t f, const TwinLoc& loc) {
  const bool aic = block.core == CoreType::AIC;
  auto& pending = l.pendingAll[aic];
  if (pending.empty()) pending.resize(aic ? l.aicCount : l.aivCount);
  const uint64_t me = block.mix ? (aic ? block.group : block.group * 2 + block.sub) : block.idx;
  ++pending[me][f];
  for (const auto& p : pending)
    if (p[f] == 0) return;
  for (auto& p : pending) --p[f];
  for (size_t gi = 0; gi < l.groups.size(); ++gi) {
    Launch::Group& g = l.groups[gi];
    if (!block.mix) RaiseFlag(g.toAiv[0][f], loc);
    else if (aic) RaiseFlag(g.toAic[f], loc);
    else for (uint32_t s = 0; s < l.aivCount / l.aicCount; ++s) RaiseFlag(g.toAiv[s][f], loc);
  }
}
}  // namespace twin

template <uint8_t modeId, pipe_t pipe>
inline void CrossCoreSetFlag(uint16_t flagId, TwinLoc loc = {}) {
  static_assert(modeId == 0 || modeId == 1 || modeId == 2, "a 910B has CrossCoreSetFlag modes 0, 1 and 2");
  twin::CheckFlagId(flagId, "CrossCoreSetFlag", loc);
  twin::Launch* l = twin::launch;
  if (modeId != 2 && (!l || l->partial))
    TwinFailAt(loc, "CrossCoreSetFlag modes 0 / 1 need every core of the launch resident at once");
  if (modeId == 1 && !(twin::block.mix && twin::block.core == twin::CoreType::AIV))
    TwinFailAt(loc, "CrossCoreSetFlag mode 1 synchronizes the two AIVs of a mix group: call it on an AIV");
  std::unique_lock<std::mutex> lock;
  if (l) lock = std::unique_lock<std::mutex>(l->mu);
  if constexpr (modeId == 0) {
    twin::SetFlagAll(*l, flagId, loc);
  } else if (!twin::block.mix) {  // mode 2 without a group: the core's own counter
    twin::RaiseFlag(twin::FlagCounter(l, flagId), loc);
  } else {
    twin::Launch::Group& g = l->groups[twin::block.group];
    const int64_t sub = twin::block.sub;
    const int aivs = static_cast<int>(twin::block.core == twin::CoreType::AIC ? l->aivCount / l->aicCount
                                                                              : twin::block.ratio);  // 2, or 1 in 1:1
    if (modeId == 2 && twin::block.core == twin::CoreType::AIC) {
      for (int s = 0; s < aivs; ++s) twin::RaiseFlag(g.toAiv[s][flagId], loc);
    } else {
      auto& pending = modeId == 2 ? g.pendingToAic : g.pendingPair;
      ++pending[sub][flagId];
      if (pending[0][flagId] > 0 && (aivs == 1 || pending[1][flagId] > 0)) {
        --pending[0][flagId];
        if (aivs == 2) --pending[1][flagId];
        if (modeId == 2) {
          twin::RaiseFlag(g.toAic[flagId], loc);
        } else {
          for (int s = 0; s < aivs; ++s) twin::RaiseFlag(g.toAiv[s][flagId], loc);
        }
      }
    }
  }
  if (l) l->cv.notify_all();
}

template <uint8_t modeId = 0, pipe_t pipe = PIPE_S>
inline void CrossCoreWaitFlag(uint16_t flagId, TwinLoc loc = {}) {
  twin::CheckFlagId(flagId, "CrossCoreWaitFlag", loc);
  twin::Launch* l = twin::launch;
  twin::BarrierAll();
  if (!l) {
    uint32_t& counter = twin::FlagCounter(l, flagId);
    if (counter == 0) TwinFailAt(loc, "CrossCoreWaitFlag with no CrossCoreSetFlag before it: the core would hang");
    --counter;
    return;
  }
  std::unique_lock<std::mutex> lock(l->mu);
  uint32_t& counter = twin::FlagCounter(l, flagId);
  twin::WaitUntil(lock, [&] { return counter > 0; }, loc,
                  "CrossCoreWaitFlag timed out: no CrossCoreSetFlag raised this core's flag (the core would hang)");
  --counter;
}

// printf on the device: printed by the host, prefixed with the core that printed it.
template <typename... Args>
inline void printf(const char* fmt, Args... args) {
  std::lock_guard<std::mutex> lock(twin::GmMutex());
  std::fprintf(stdout, "[%s %lld] ", twin::block.core == twin::CoreType::AIC ? "AIC" : "AIV",
               static_cast<long long>(twin::block.idx));
  if constexpr (sizeof...(Args) == 0) {
    std::fputs(fmt, stdout);
  } else {
    std::fprintf(stdout, fmt, args...);
  }
  std::fflush(stdout);
}
template <typename... Args>
inline void PRINTF(const char* fmt, Args... args) { AscendC::printf(fmt, args...); }

namespace twin {
inline void AssertFailed(const char* expr, const char* file, int line, const char* fmt = nullptr, ...) {
  char msg[512];
  int at = std::snprintf(msg, sizeof msg, "ascendc_assert(%s) failed on %s %lld", expr,
                         block.core == CoreType::AIC ? "AIC" : "AIV", static_cast<long long>(block.idx));
  if (fmt != nullptr && at > 0 && at < static_cast<int>(sizeof msg) - 2) {
    msg[at++] = ':';
    msg[at++] = ' ';
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(msg + at, sizeof msg - at, fmt, ap);
    va_end(ap);
  }
  TwinFailAt(TwinLoc(file, line), msg);
}

// Runs one core of a launch on the calling thread.
inline void RunCore(const BlockContext& ctx, Launch* l, const std::function<void()>& body) {
  block = ctx;
  launch = l;
  ResetCore();
  maskReg = MaskRegister{};
  atomic = AtomicMode::None;
  soloGroup = Launch::Group{};
  body();
  launch = nullptr;
}
}  // namespace twin

// Runs every core of a launch, one host thread each, as the AI-core pool does: cores share
// global memory and nothing else.
inline void RunBlocks(uint32_t blockDim, const std::function<void()>& body, KernelMode mode = twin::Mode()) {
  twin::Launch l;
  std::vector<twin::BlockContext> cores;
  for (uint32_t b = 0; b < blockDim; ++b) {
    if (mode == KernelMode::MIX_MODE || mode == KernelMode::MIX_AIC_1_1) {
      const int64_t ratio = mode == KernelMode::MIX_MODE ? 2 : 1;
      cores.push_back({b, blockDim, 0, 1, twin::CoreType::AIC, true, b});
      for (int64_t s = 0; s < ratio; ++s) cores.push_back({b * ratio + s, blockDim, s, ratio, twin::CoreType::AIV, true, b});
    } else {
      cores.push_back({b, blockDim, 0, 1, mode == KernelMode::AIC_MODE ? twin::CoreType::AIC : twin::CoreType::AIV, false, b});
    }
  }
  l.groups.resize(blockDim);
  for (const auto& c : cores) (c.core == twin::CoreType::AIV ? l.aivCount : l.aicCount) += 1;
  std::vector<std::thread> threads;
  for (const auto& c : cores) threads.emplace_back([c, &l, &body] { twin::RunCore(c, &l, body); });
  for (auto& t : threads) t.join();
}

// Runs one block: the entry the runtime's aclrtKernelFunc uses, one call per block. A plain block
// is one core on the calling thread; a mix block is its group of 1 AIC + 2 AIVs on threads of
// their own. SyncAll across blocks needs every block at once (RunBlocks).
inline void RunBlock(uint32_t blockIdx, uint32_t blockDim, const std::function<void()>& body,
                     KernelMode mode = KernelMode::AIV_MODE) {
  if (mode != KernelMode::MIX_MODE && mode != KernelMode::MIX_AIC_1_1) {
    twin::RunCore({blockIdx, blockDim, 0, 1, mode == KernelMode::AIC_MODE ? twin::CoreType::AIC : twin::CoreType::AIV,
                   false, blockIdx}, nullptr, body);
    return;
  }
  const int64_t ratio = mode == KernelMode::MIX_MODE ? 2 : 1;
  twin::Launch l;
  l.partial = true;
  l.groups.resize(blockDim);
  l.aivCount = static_cast<uint32_t>(ratio);
  l.aicCount = 1;
  std::vector<std::thread> threads;
  threads.emplace_back([&] { twin::RunCore({blockIdx, blockDim, 0, 1, twin::CoreType::AIC, true, blockIdx}, &l, body); });
  for (int64_t s = 0; s < ratio; ++s)
    threads.emplace_back([&, s] {
      twin::RunCore({blockIdx * ratio + s, blockDim, s, ratio, twin::CoreType::AIV, true, blockIdx}, &l, body);
    });
  for (auto& t : threads) t.join();
}

}  // namespace AscendC

#define ASCEND_IS_AIV (::AscendC::twin::block.core == ::AscendC::twin::CoreType::AIV)
#define ASCEND_IS_AIC (::AscendC::twin::block.core == ::AscendC::twin::CoreType::AIC)
#define ASCEND_IS_NOT_AIV (!ASCEND_IS_AIV)
#define ASCEND_IS_NOT_AIC (!ASCEND_IS_AIC)

// Declares the kernel's core mix; the twin checks the launch matches it.
#define KERNEL_TASK_TYPE_DEFAULT(type) ::AscendC::twin::CheckTaskType(::AscendC::type, __FILE__, __LINE__)
namespace AscendC::twin {
inline void CheckTaskType(KernelMetaType type, const char* file, int line) {
  const bool mixType = type == KERNEL_TYPE_MIX_AIC_1_2 || type == KERNEL_TYPE_MIX_AIC_1_1;
  if (mixType && !block.mix)
    TwinFailAt(TwinLoc(file, line), "a mix kernel launched on plain cores: call AscendC::SetKernelMode(KernelMode::MIX_MODE) "
                                    "before ICPU_RUN_KF (npu-ascendc does it for __mix__ kernels)");
  if (type == KERNEL_TYPE_AIC_ONLY && !block.mix) block.core = CoreType::AIC;
}
}  // namespace AscendC::twin

#define ascendc_assert(cond, ...)                                                            \
  do {                                                                                       \
    if (!(cond)) ::AscendC::twin::AssertFailed(#cond, __FILE__, __LINE__, ##__VA_ARGS__);   \
  } while (0)

// CANN's CPU debug launcher: ICPU_RUN_KF(kernel, blockDim, args...).
#define ICPU_RUN_KF(kernel, blockDim, ...) ::AscendC::RunBlocks((blockDim), [&] { kernel(__VA_ARGS__); })
