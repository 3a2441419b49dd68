// Vector-unit instructions on local tensors (PIPE_V). Arithmetic runs in fp32 and is rounded
// back to T, as the vector unit computes fp16/bf16 with fp32 internals.
//
// Each instruction comes in the count form (`Add(dst, a, b, count)`: `count` contiguous
// elements) and the mask / repeat form of the hardware (`Add(dst, a, b, mask, repeatTimes,
// BinaryRepeatParams)`): an iteration ("repeat") covers 8 data blocks of 32 bytes; operand X's
// block j of repeat r starts (r * XRepStride + j * XBlkStride) * 32 bytes into X; `mask` selects
// the elements of each repeat, either as a count of leading elements (`uint64_t mask`) or as a bit
// per element (`uint64_t mask[2]`, low word first). With the template flag isSetMask = false the
// mask comes from SetVectorMask instead (MASK_PLACEHOLDER in the call), in normal or counter mode.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace AscendC {

constexpr int32_t DEFAULT_BLK_NUM = 8;
constexpr int32_t DEFAULT_BLK_STRIDE = 1;
constexpr uint8_t DEFAULT_REPEAT_STRIDE = 8;
constexpr uint64_t MASK_PLACEHOLDER = 0;

struct UnaryRepeatParams {
  UnaryRepeatParams() = default;
  UnaryRepeatParams(uint16_t dstBlkStrideIn, uint16_t srcBlkStrideIn, uint8_t dstRepStrideIn, uint8_t srcRepStrideIn)
      : dstBlkStride(dstBlkStrideIn), srcBlkStride(srcBlkStrideIn), dstRepStride(dstRepStrideIn),
        srcRepStride(srcRepStrideIn) {}
  uint32_t blockNumber = DEFAULT_BLK_NUM;
  uint16_t dstBlkStride = DEFAULT_BLK_STRIDE;
  uint16_t srcBlkStride = DEFAULT_BLK_STRIDE;
  uint8_t dstRepStride = DEFAULT_REPEAT_STRIDE;
  uint8_t srcRepStride = DEFAULT_REPEAT_STRIDE;
  bool repeatStrideMode = false;
  bool strideSizeMode = false;
};

struct BinaryRepeatParams {
  BinaryRepeatParams() = default;
  BinaryRepeatParams(uint8_t dstBlkStrideIn, uint8_t src0BlkStrideIn, uint8_t src1BlkStrideIn, uint8_t dstRepStrideIn,
                     uint8_t src0RepStrideIn, uint8_t src1RepStrideIn)
      : dstBlkStride(dstBlkStrideIn), src0BlkStride(src0BlkStrideIn), src1BlkStride(src1BlkStrideIn),
        dstRepStride(dstRepStrideIn), src0RepStride(src0RepStrideIn), src1RepStride(src1RepStrideIn) {}
  uint32_t blockNumber = DEFAULT_BLK_NUM;
  uint8_t dstBlkStride = DEFAULT_BLK_STRIDE;
  uint8_t src0BlkStride = DEFAULT_BLK_STRIDE;
  uint8_t src1BlkStride = DEFAULT_BLK_STRIDE;
  uint8_t dstRepStride = DEFAULT_REPEAT_STRIDE;
  uint8_t src0RepStride = DEFAULT_REPEAT_STRIDE;
  uint8_t src1RepStride = DEFAULT_REPEAT_STRIDE;
  bool repeatStrideMode = false;
  bool strideSizeMode = false;
};

enum class MaskMode : uint8_t { NORMAL = 0, COUNTER };

namespace twin {
// The vector mask register of the calling core (SetVectorMask / SetMaskCount / SetMaskNorm).
struct MaskRegister {
  MaskMode mode = MaskMode::NORMAL;
  uint64_t high = ~uint64_t{0}, low = ~uint64_t{0};
};
inline thread_local MaskRegister maskReg;

// Which elements of each repeat an instruction touches, and how many repeats it runs.
struct Lanes {
  uint64_t bits[2] = {0, 0};  // bit e: element e of a repeat
  uint32_t repeats = 0;
  uint64_t counterLeft = 0;  // counter mode: elements left over all repeats
  bool counter = false;
  bool Active(uint32_t r, uint32_t e, uint32_t perRepeat) const {
    if (counter) return uint64_t{r} * perRepeat + e < counterLeft;
    return (bits[e / 64] >> (e % 64)) & 1u;
  }
};

template <typename T>
constexpr uint32_t PerRepeat() { return 256 / sizeof(T); }
template <typename T>
constexpr uint32_t PerBlock() { return 32 / sizeof(T); }

template <typename T>
inline Lanes ContinuousMask(uint64_t mask, uint32_t repeats, const TwinLoc& loc) {
  if (mask == 0 || mask > PerRepeat<T>()) {
    char msg[128];
    std::snprintf(msg, sizeof msg, "vector mask %llu outside [1, %u] for this dtype", static_cast<unsigned long long>(mask),
                  PerRepeat<T>());
    TwinFailAt(loc, msg);
  }
  Lanes l;
  for (uint64_t e = 0; e < mask; ++e) l.bits[e / 64] |= uint64_t{1} << (e % 64);
  l.repeats = repeats;
  return l;
}

template <typename T>
inline Lanes BitMask(const uint64_t mask[2], uint32_t repeats, const TwinLoc& loc) {
  if (PerRepeat<T>() <= 64 && mask[1] != 0) TwinFailAt(loc, "vector mask[1] must be 0 for a 32-bit dtype (64 lanes)");
  Lanes l;
  l.bits[0] = mask[0];
  l.bits[1] = PerRepeat<T>() > 64 ? mask[1] : 0;
  l.repeats = repeats;
  return l;
}

// The register's mask: normal mode as a bit mask per repeat; counter mode as a total count
// (the instruction's repeatTimes is then ignored, as on hardware).
template <typename T>
inline Lanes RegisterMask(uint32_t repeats) {
  Lanes l;
  if (maskReg.mode == MaskMode::COUNTER) {
    l.counter = true;
    l.counterLeft = maskReg.low;
    l.repeats = static_cast<uint32_t>((maskReg.low + PerRepeat<T>() - 1) / PerRepeat<T>());
    return l;
  }
  l.bits[0] = maskReg.low;
  l.bits[1] = PerRepeat<T>() > 64 ? maskReg.high : 0;
  l.repeats = repeats;
  return l;
}

template <typename T>
inline Lanes CountLanes(uint64_t count) {
  Lanes l;
  l.counter = true;
  l.counterLeft = count;
  l.repeats = static_cast<uint32_t>((count + PerRepeat<T>() - 1) / PerRepeat<T>());
  return l;
}

// One operand's addressing: element e of repeat r.
struct Stride {
  uint32_t blk = 1, rep = 8;  // in 32-byte blocks
};
template <typename T>
inline uint64_t At(const Stride& s, uint32_t r, uint32_t e) {
  return (uint64_t{r} * s.rep + uint64_t{e / PerBlock<T>()} * s.blk) * PerBlock<T>() + e % PerBlock<T>();
}

// Runs f(r, e) over the active elements; checks every operand's range and records the 32-byte
// blocks each touches on the V pipe (reads before writes, as the unit does).
struct Operand {
  const void* base;
  uint32_t size;  // elements
  uint32_t elemBytes;
  Stride stride;
  bool write;
};

template <typename T, typename F>
inline void ForLanes(const Lanes& lanes, std::initializer_list<Operand> ops, const char* name, const TwinLoc& loc, F f,
                     bool aligned = true) {
  // Vector instructions address local memory in 32-byte blocks: every operand starts on one.
  if (aligned)
    for (const Operand& o : ops) CheckLocalAlign(o.base, 32, name, loc);
  Op op(V, loc, name);
  const uint32_t per = PerRepeat<T>();
  for (const Operand& o : ops) {
    uint64_t maxAt = 0;
    bool any = false;
    const uint32_t perBlock = 32 / o.elemBytes;
    for (uint32_t r = 0; r < lanes.repeats; ++r) {
      for (uint32_t j = 0; j < 8; ++j) {
        bool used = false;
        for (uint32_t e = j * PerBlock<T>(); e < (j + 1) * PerBlock<T>() && e < per; ++e) used = used || lanes.Active(r, e, per);
        if (!used) continue;
        // Operand blocks follow the instruction dtype's lanes; a wider/narrower operand (Cast)
        // scales its element offset.
        uint64_t first = (uint64_t{r} * o.stride.rep + uint64_t{j} * o.stride.blk) * perBlock;
        uint64_t last = first + perBlock;
        if (last > maxAt) maxAt = last;
        any = true;
        const uint8_t* p = static_cast<const uint8_t*>(o.base) + first * o.elemBytes;
        if (o.write) op.Write(p, 32); else op.Read(p, 32);
      }
    }
    if (any && maxAt > o.size) {
      // A count form's last block may run past the tensor only by the elements it does not use.
      uint64_t used = lanes.counter ? std::min<uint64_t>(lanes.counterLeft, maxAt) : maxAt;
      if (used > o.size) {
        char msg[200];
        std::snprintf(msg, sizeof msg, "%s addresses %llu elements of a local tensor that holds %u", name,
                      static_cast<unsigned long long>(used), o.size);
        TwinFailAt(loc, msg);
      }
    }
  }
  for (uint32_t r = 0; r < lanes.repeats; ++r)
    for (uint32_t e = 0; e < per; ++e)
      if (lanes.Active(r, e, per)) f(r, e);
}

template <typename T>
inline Operand Opnd(const LocalTensor<T>& t, Stride s, bool write) {
  return Operand{t.GetPhyAddr(), t.GetSize(), sizeof(T), s, write};
}

template <typename T, typename F>
inline void Unary(const LocalTensor<T>& dst, const LocalTensor<T>& src, const Lanes& lanes, const UnaryRepeatParams& p,
                  const char* name, const TwinLoc& loc, F f) {
  Stride sd{p.dstBlkStride, p.dstRepStride}, ss{p.srcBlkStride, p.srcRepStride};
  ForLanes<T>(lanes, {Opnd(src, ss, false), Opnd(dst, sd, true)}, name, loc, [&](uint32_t r, uint32_t e) {
    dst.TwinSet(static_cast<uint32_t>(At<T>(sd, r, e)), T(f(static_cast<float>(src.TwinGet(static_cast<uint32_t>(At<T>(ss, r, e)))))));
  });
}

template <typename T, typename F>
inline void Binary(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b, const Lanes& lanes,
                   const BinaryRepeatParams& p, const char* name, const TwinLoc& loc, F f) {
  Stride sd{p.dstBlkStride, p.dstRepStride}, s0{p.src0BlkStride, p.src0RepStride}, s1{p.src1BlkStride, p.src1RepStride};
  ForLanes<T>(lanes, {Opnd(a, s0, false), Opnd(b, s1, false), Opnd(dst, sd, true)}, name, loc, [&](uint32_t r, uint32_t e) {
    float x = static_cast<float>(a.TwinGet(static_cast<uint32_t>(At<T>(s0, r, e))));
    float y = static_cast<float>(b.TwinGet(static_cast<uint32_t>(At<T>(s1, r, e))));
    dst.TwinSet(static_cast<uint32_t>(At<T>(sd, r, e)), T(f(x, y)));
  });
}

template <typename T>
inline float AsFloat(T v) { return static_cast<float>(v); }
}  // namespace twin

template <typename T, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(uint64_t maskHigh, uint64_t maskLow) {
  twin::maskReg.high = maskHigh;
  twin::maskReg.low = maskLow;
  (void)mode;
}
template <typename T, MaskMode mode = MaskMode::NORMAL>
inline void SetVectorMask(int32_t len) {
  if (twin::maskReg.mode == MaskMode::COUNTER) {
    twin::maskReg.high = 0;
    twin::maskReg.low = static_cast<uint64_t>(len);
    return;
  }
  twin::maskReg.low = twin::maskReg.high = 0;
  for (int32_t e = 0; e < len; ++e) (e < 64 ? twin::maskReg.low : twin::maskReg.high) |= uint64_t{1} << (e % 64);
}
inline void ResetMask() { twin::maskReg.high = twin::maskReg.low = ~uint64_t{0}; }
inline void SetMaskCount() { twin::maskReg.mode = MaskMode::COUNTER; }
inline void SetMaskNorm() { twin::maskReg.mode = MaskMode::NORMAL; }

// Binary ops: count, continuous-mask and bit-mask forms.
#define TWIN_BINARY(NAME, EXPR)                                                                                   \
  template <typename T>                                                                                           \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b, int32_t count,    \
                   TwinLoc loc = {}) {                                                                            \
    twin::Binary(dst, a, b, twin::CountLanes<T>(static_cast<uint64_t>(count)), BinaryRepeatParams{}, #NAME, loc,   \
                 [](float x, float y) { return EXPR; });                                                          \
  }                                                                                                               \
  template <typename T, bool isSetMask = true>                                                                    \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b, uint64_t mask,    \
                   uint8_t repeatTimes, const BinaryRepeatParams& p, TwinLoc loc = {}) {                          \
    twin::Binary(dst, a, b, isSetMask ? twin::ContinuousMask<T>(mask, repeatTimes, loc) : twin::RegisterMask<T>(repeatTimes), \
                 p, #NAME, loc, [](float x, float y) { return EXPR; });                                           \
  }                                                                                                               \
  template <typename T, bool isSetMask = true>                                                                    \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,                   \
                   const uint64_t mask[2], uint8_t repeatTimes, const BinaryRepeatParams& p, TwinLoc loc = {}) {  \
    twin::Binary(dst, a, b, isSetMask ? twin::BitMask<T>(mask, repeatTimes, loc) : twin::RegisterMask<T>(repeatTimes), p, \
                 #NAME, loc, [](float x, float y) { return EXPR; });                                              \
  }
TWIN_BINARY(Add, x + y)
TWIN_BINARY(Sub, x - y)
TWIN_BINARY(Mul, x * y)
TWIN_BINARY(Div, x / y)
TWIN_BINARY(Max, std::max(x, y))
TWIN_BINARY(Min, std::min(x, y))
TWIN_BINARY(AddRelu, std::max(x + y, 0.0f))
TWIN_BINARY(SubRelu, std::max(x - y, 0.0f))
#undef TWIN_BINARY

#define TWIN_UNARY(NAME, EXPR)                                                                                    \
  template <typename T>                                                                                           \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, int32_t count, TwinLoc loc = {}) {       \
    twin::Unary(dst, src, twin::CountLanes<T>(static_cast<uint64_t>(count)), UnaryRepeatParams{}, #NAME, loc,      \
                [](float x) { return EXPR; });                                                                    \
  }                                                                                                               \
  template <typename T, bool isSetMask = true>                                                                    \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask, uint8_t repeatTimes,      \
                   const UnaryRepeatParams& p, TwinLoc loc = {}) {                                                \
    twin::Unary(dst, src, isSetMask ? twin::ContinuousMask<T>(mask, repeatTimes, loc) : twin::RegisterMask<T>(repeatTimes), \
                p, #NAME, loc, [](float x) { return EXPR; });                                                     \
  }                                                                                                               \
  template <typename T, bool isSetMask = true>                                                                    \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint64_t mask[2],                  \
                   uint8_t repeatTimes, const UnaryRepeatParams& p, TwinLoc loc = {}) {                           \
    twin::Unary(dst, src, isSetMask ? twin::BitMask<T>(mask, repeatTimes, loc) : twin::RegisterMask<T>(repeatTimes), p, \
                #NAME, loc, [](float x) { return EXPR; });                                                        \
  }
TWIN_UNARY(Exp, std::exp(x))
TWIN_UNARY(Ln, std::log(x))
TWIN_UNARY(Abs, std::fabs(x))
TWIN_UNARY(Sqrt, std::sqrt(x))
TWIN_UNARY(Rsqrt, 1.0f / std::sqrt(x))
TWIN_UNARY(Reciprocal, 1.0f / x)
TWIN_UNARY(Relu, std::max(x, 0.0f))
// AscendC's high-level math APIs (lib/math): elementwise, fp32 inside.
TWIN_UNARY(Tanh, std::tanh(x))
TWIN_UNARY(Erf, std::erf(x))
TWIN_UNARY(Sin, std::sin(x))
TWIN_UNARY(Cos, std::cos(x))
TWIN_UNARY(Floor, std::floor(x))
TWIN_UNARY(Ceil, std::ceil(x))
TWIN_UNARY(Round, std::nearbyint(x))
TWIN_UNARY(Tan, std::tan(x))
TWIN_UNARY(Sinh, std::sinh(x))
TWIN_UNARY(Cosh, std::cosh(x))
TWIN_UNARY(Asin, std::asin(x))
TWIN_UNARY(Acos, std::acos(x))
TWIN_UNARY(Atan, std::atan(x))
TWIN_UNARY(Asinh, std::asinh(x))
TWIN_UNARY(Acosh, std::acosh(x))
TWIN_UNARY(Atanh, std::atanh(x))
#undef TWIN_UNARY

#define TWIN_SCALAR(NAME, EXPR)                                                                                   \
  template <typename T>                                                                                           \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalar, int32_t count,          \
                   TwinLoc loc = {}) {                                                                            \
    float s = static_cast<float>(scalar);                                                                         \
    twin::Unary(dst, src, twin::CountLanes<T>(static_cast<uint64_t>(count)), UnaryRepeatParams{}, #NAME, loc,      \
                [s](float x) { return EXPR; });                                                                   \
  }                                                                                                               \
  template <typename T, bool isSetMask = true>                                                                    \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalar, uint64_t mask,          \
                   uint8_t repeatTimes, const UnaryRepeatParams& p, TwinLoc loc = {}) {                           \
    float s = static_cast<float>(scalar);                                                                         \
    twin::Unary(dst, src, isSetMask ? twin::ContinuousMask<T>(mask, repeatTimes, loc) : twin::RegisterMask<T>(repeatTimes), \
                p, #NAME, loc, [s](float x) { return EXPR; });                                                    \
  }                                                                                                               \
  template <typename T, bool isSetMask = true>                                                                    \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalar, const uint64_t mask[2], \
                   uint8_t repeatTimes, const UnaryRepeatParams& p, TwinLoc loc = {}) {                           \
    float s = static_cast<float>(scalar);                                                                         \
    twin::Unary(dst, src, isSetMask ? twin::BitMask<T>(mask, repeatTimes, loc) : twin::RegisterMask<T>(repeatTimes), p, \
                #NAME, loc, [s](float x) { return EXPR; });                                                       \
  }
TWIN_SCALAR(Adds, x + s)
TWIN_SCALAR(Muls, x * s)
TWIN_SCALAR(Maxs, std::max(x, s))
TWIN_SCALAR(Mins, std::min(x, s))
TWIN_SCALAR(LeakyRelu, x >= 0.0f ? x : x * s)
#undef TWIN_SCALAR

template <typename T>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalar, int32_t count, TwinLoc loc = {}) {
  twin::ForLanes<T>(twin::CountLanes<T>(static_cast<uint64_t>(count)), {twin::Opnd(dst, twin::Stride{}, true)}, "Duplicate",
                    loc, [&](uint32_t r, uint32_t e) { dst.TwinSet(r * twin::PerRepeat<T>() + e, scalar); });
}
template <typename T, bool isSetMask = true>
inline void Duplicate(const LocalTensor<T>& dst, const T& scalar, uint64_t mask, uint8_t repeatTimes,
                      uint16_t dstBlockStride, uint8_t dstRepeatStride, TwinLoc loc = {}) {
  twin::Stride s{dstBlockStride, dstRepeatStride};
  twin::Lanes lanes = isSetMask ? twin::ContinuousMask<T>(mask, repeatTimes, loc) : twin::RegisterMask<T>(repeatTimes);
  twin::ForLanes<T>(lanes, {twin::Opnd(dst, s, true)}, "Duplicate", loc,
                    [&](uint32_t r, uint32_t e) { dst.TwinSet(static_cast<uint32_t>(twin::At<T>(s, r, e)), scalar); });
}

enum class RoundMode { CAST_NONE, CAST_RINT, CAST_FLOOR, CAST_CEIL, CAST_ROUND, CAST_TRUNC, CAST_ODD };

// The modes round to an integer for an integer destination. For a floating one (half, bfloat16_t,
// float; std::is_floating_point does not count the first two) the twin rounds to nearest even
// (CAST_NONE / CAST_RINT) and refuses the directed modes rather than compute them wrongly.
template <typename D, typename S>
inline void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, RoundMode mode, uint32_t count, TwinLoc loc = {}) {
  constexpr bool floatDst = std::is_floating_point_v<D> || std::is_same_v<D, half> || std::is_same_v<D, bfloat16_t>;
  if (floatDst && mode != RoundMode::CAST_NONE && mode != RoundMode::CAST_RINT)
    TwinFailAt(loc, "Cast to a floating type: the twin models CAST_NONE / CAST_RINT (nearest even) only");
  TwinCheckRangeAt(dst, count, "Cast", loc);
  TwinCheckRangeAt(src, count, "Cast", loc);
  twin::Op op(twin::V, loc, "Cast");
  op.Read(src.GetPhyAddr(), uint64_t{count} * sizeof(S));
  op.Write(dst.GetPhyAddr(), uint64_t{count} * sizeof(D));
  for (uint32_t i = 0; i < count; ++i) {
    float x = static_cast<float>(src.TwinGet(i));
    switch (mode) {
      case RoundMode::CAST_FLOOR: x = std::floor(x); break;
      case RoundMode::CAST_CEIL: x = std::ceil(x); break;
      case RoundMode::CAST_ROUND: x = std::round(x); break;
      case RoundMode::CAST_TRUNC: x = std::trunc(x); break;
      case RoundMode::CAST_RINT: x = floatDst ? x : std::nearbyint(x); break;
      default: break;
    }
    dst.TwinSet(i, static_cast<D>(x));
  }
}

// ---- reductions
namespace twin {
struct ReduceOp {
  float init;
  float (*step)(float, float);
};
inline float StepSum(float a, float x) { return a + x; }
inline float StepMax(float a, float x) { return std::max(a, x); }
inline float StepMin(float a, float x) { return std::min(a, x); }

// Reduces the active lanes of every repeat (source blocks contiguous, repeats srcRepStride
// blocks apart) into dst[0]; with calIndex the index of the extreme value goes into dst[1]
// (its bits, as the hardware stores it).
template <typename T>
inline void ReduceAll(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work, const Lanes& lanes,
                      uint32_t srcRepStride, bool calIndex, ReduceOp rop, const char* name, const TwinLoc& loc) {
  (void)work;
  Stride s{1, srcRepStride};
  float acc = rop.init;
  uint64_t index = 0;
  bool first = true;
  ForLanes<T>(lanes, {Opnd(src, s, false)}, name, loc, [&](uint32_t r, uint32_t e) {
    float x = static_cast<float>(src.TwinGet(static_cast<uint32_t>(At<T>(s, r, e))));
    float next = rop.step(acc, x);
    if (first || next != acc) index = At<T>(s, r, e);
    if (rop.step == StepSum) index = 0;
    acc = next;
    first = false;
  });
  TwinCheckRangeAt(dst, calIndex ? 2 : 1, name, loc);
  Op(V, loc, name).Write(dst.GetPhyAddr(), (calIndex ? 2 : 1) * sizeof(T));
  dst.TwinSet(0, T(acc));
  if (calIndex) {
    if constexpr (sizeof(T) == 4) {
      uint32_t bits = static_cast<uint32_t>(index);
      T v;
      std::memcpy(&v, &bits, 4);
      dst.TwinSet(1, v);
    } else {
      uint16_t bits = static_cast<uint16_t>(index);
      T v;
      std::memcpy(&v, &bits, 2);
      dst.TwinSet(1, v);
    }
  }
}
}  // namespace twin

#define TWIN_REDUCE(NAME, INIT, STEP)                                                                            \
  template <typename T>                                                                                          \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work, int32_t count, \
                   bool calIndex = false, TwinLoc loc = {}) {                                                    \
    twin::ReduceAll(dst, src, work, twin::CountLanes<T>(static_cast<uint64_t>(count)), 8, calIndex,             \
                    twin::ReduceOp{INIT, STEP}, #NAME, loc);                                                     \
  }                                                                                                              \
  template <typename T>                                                                                          \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work, uint64_t mask, \
                   int32_t repeatTimes, int32_t srcRepStride, bool calIndex = false, TwinLoc loc = {}) {         \
    twin::ReduceAll(dst, src, work, twin::ContinuousMask<T>(mask, repeatTimes, loc), srcRepStride, calIndex,     \
                    twin::ReduceOp{INIT, STEP}, #NAME, loc);                                                     \
  }                                                                                                              \
  template <typename T>                                                                                          \
  inline void NAME(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<T>& work,             \
                   const uint64_t mask[2], int32_t repeatTimes, int32_t srcRepStride, bool calIndex = false,     \
                   TwinLoc loc = {}) {                                                                           \
    twin::ReduceAll(dst, src, work, twin::BitMask<T>(mask, repeatTimes, loc), srcRepStride, calIndex,            \
                    twin::ReduceOp{INIT, STEP}, #NAME, loc);                                                     \
  }
TWIN_REDUCE(ReduceSum, 0.0f, twin::StepSum)
TWIN_REDUCE(ReduceMax, -INFINITY, twin::StepMax)
TWIN_REDUCE(ReduceMin, INFINITY, twin::StepMin)
#undef TWIN_REDUCE

// One sum per repeat: dst[r * dstRepStride] = sum of repeat r's active lanes.
template <typename T, bool isSetMask = true>
inline void WholeReduceSum(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint64_t mask, int32_t repeatTimes,
                           int32_t dstRepStride, int32_t srcBlkStride, int32_t srcRepStride, TwinLoc loc = {}) {
  twin::Stride s{static_cast<uint32_t>(srcBlkStride), static_cast<uint32_t>(srcRepStride)};
  twin::Lanes lanes = isSetMask ? twin::ContinuousMask<T>(mask, repeatTimes, loc) : twin::RegisterMask<T>(repeatTimes);
  std::vector<float> sums(lanes.repeats, 0.0f);
  twin::ForLanes<T>(lanes, {twin::Opnd(src, s, false)}, "WholeReduceSum", loc, [&](uint32_t r, uint32_t e) {
    sums[r] += static_cast<float>(src.TwinGet(static_cast<uint32_t>(twin::At<T>(s, r, e))));
  });
  TwinCheckRangeAt(dst, uint64_t{lanes.repeats ? lanes.repeats - 1u : 0u} * dstRepStride + 1, "WholeReduceSum", loc);
  twin::Op op(twin::V, loc, "WholeReduceSum");
  for (uint32_t r = 0; r < lanes.repeats; ++r) {
    op.Write(dst.GetPhyAddr() + uint64_t{r} * dstRepStride, sizeof(T));
    dst.TwinSet(r * dstRepStride, T(sums[r]));
  }
}

// lib/reduce Sum: for each of `outter` rows of `inner` elements (inner 32-byte aligned), the sum
// of its first n into dst[row].
struct SumParams {
  uint32_t outter = 1;
  uint32_t inner = 0;
  uint32_t n = 0;
};
template <typename T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
inline void Sum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const SumParams& p, TwinLoc loc = {}) {
  if (p.inner * sizeof(T) % 32 != 0) TwinFailAt(loc, "Sum: SumParams.inner * sizeof(T) must be a multiple of 32");
  if (p.n > p.inner) TwinFailAt(loc, "Sum: SumParams.n exceeds inner");
  TwinCheckRangeAt(src, uint64_t{p.outter} * p.inner, "Sum", loc);
  TwinCheckRangeAt(dst, p.outter, "Sum", loc);
  twin::Op op(twin::V, loc, "Sum");
  op.Read(src.GetPhyAddr(), uint64_t{p.outter} * p.inner * sizeof(T));
  op.Write(dst.GetPhyAddr(), uint64_t{p.outter} * sizeof(T));
  for (uint32_t r = 0; r < p.outter; ++r) {
    float acc = 0.0f;
    for (uint32_t i = 0; i < p.n; ++i) acc += static_cast<float>(src.TwinGet(r * p.inner + i));
    dst.TwinSet(r, T(acc));
  }
}
template <typename T, int32_t reduceDim = -1, bool isReuseSource = false, bool isBasicBlock = false>
inline void Sum(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LocalTensor<uint8_t>& sharedTmpBuffer,
                const SumParams& p, TwinLoc loc = {}) {
  (void)sharedTmpBuffer;
  Sum<T, reduceDim, isReuseSource, isBasicBlock>(dst, src, p, loc);
}

// lib BroadCast: dim-1 or dim-2 shapes; along `axis` src has extent 1 and is repeated.
template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>
inline void BroadCast(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dstShape[dim],
                      const uint32_t srcShape[dim], TwinLoc loc = {}) {
  static_assert(dim == 1 || dim == 2, "BroadCast supports 1-d and 2-d shapes");
  static_assert(axis >= 0 && axis < dim, "BroadCast axis out of range");
  if (srcShape[axis] != 1) TwinFailAt(loc, "BroadCast: the source extent along axis must be 1");
  for (int32_t d = 0; d < dim; ++d)
    if (d != axis && srcShape[d] != dstShape[d]) TwinFailAt(loc, "BroadCast: shapes differ off the broadcast axis");
  const uint32_t rows = dim == 2 ? dstShape[0] : 1, cols = dim == 2 ? dstShape[1] : dstShape[0];
  TwinCheckRangeAt(dst, uint64_t{rows} * cols, "BroadCast", loc);
  TwinCheckRangeAt(src, uint64_t{srcShape[0]} * (dim == 2 ? srcShape[1] : 1), "BroadCast", loc);
  twin::Op op(twin::V, loc, "BroadCast");
  op.Read(src.GetPhyAddr(), uint64_t{srcShape[0]} * (dim == 2 ? srcShape[1] : 1) * sizeof(T));
  op.Write(dst.GetPhyAddr(), uint64_t{rows} * cols * sizeof(T));
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t c = 0; c < cols; ++c) {
      uint32_t from = dim == 1 ? 0 : (axis == 0 ? c : r);
      dst.TwinSet(r * cols + c, src.TwinGet(from));
    }
}
template <typename T, int32_t dim, int32_t axis, bool isReuseSource = false>
inline void BroadCast(const LocalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t dstShape[dim],
                      const uint32_t srcShape[dim], const LocalTensor<uint8_t>& sharedTmpBuffer, TwinLoc loc = {}) {
  (void)sharedTmpBuffer;
  BroadCast<T, dim, axis, isReuseSource>(dst, src, dstShape, srcShape, loc);
}

// ---- compare / select: Compare writes a bit mask (bit i of byte i / 8) that Select reads.
enum class CMPMODE { LT, GT, EQ, LE, GE, NE };
enum class SELMODE { VSEL_CMPMASK_SPR, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };

namespace twin {
inline bool Compare(float x, float y, CMPMODE mode) {
  switch (mode) {
    case CMPMODE::LT: return x < y;
    case CMPMODE::GT: return x > y;
    case CMPMODE::EQ: return x == y;
    case CMPMODE::LE: return x <= y;
    case CMPMODE::GE: return x >= y;
    case CMPMODE::NE: return x != y;
  }
  return false;
}

template <typename T, typename Y>
inline void CompareInto(const LocalTensor<uint8_t>& dst, const LocalTensor<T>& a, uint32_t n, CMPMODE mode, Y y,
                        const char* name, const TwinLoc& loc) {
  TwinCheckRangeAt(a, n, name, loc);
  TwinCheckRangeAt(dst, (n + 7) / 8, "Compare mask", loc);
  Op op(V, loc, name);
  op.Read(a.GetPhyAddr(), uint64_t{n} * sizeof(T));
  op.Write(dst.GetPhyAddr(), (n + 7) / 8);
  for (uint32_t i = 0; i < (n + 7) / 8; ++i) dst.TwinSet(i, 0);
  for (uint32_t i = 0; i < n; ++i)
    if (Compare(static_cast<float>(a.TwinGet(i)), y(i), mode))
      dst.TwinSet(i / 8, static_cast<uint8_t>(dst.TwinGet(i / 8) | (1u << (i % 8))));
}

inline bool MaskBit(const LocalTensor<uint8_t>& mask, uint32_t i) { return (mask.TwinGet(i / 8) >> (i % 8)) & 1u; }
}  // namespace twin

template <typename T, typename U = uint8_t>
inline void Compare(const LocalTensor<U>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b, CMPMODE mode,
                    uint32_t count, TwinLoc loc = {}) {
  TwinCheckRangeAt(b, count, "Compare", loc);
  twin::Op(twin::V, loc, "Compare").Read(b.GetPhyAddr(), uint64_t{count} * sizeof(T));
  twin::CompareInto(dst.template ReinterpretCast<uint8_t>(), a, count, mode,
                    [&b](uint32_t i) { return static_cast<float>(b.TwinGet(i)); }, "Compare", loc);
}

template <typename T, typename U = uint8_t>
inline void CompareScalar(const LocalTensor<U>& dst, const LocalTensor<T>& a, const T& scalar, CMPMODE mode,
                          uint32_t count, TwinLoc loc = {}) {
  float s = static_cast<float>(scalar);
  twin::CompareInto(dst.template ReinterpretCast<uint8_t>(), a, count, mode, [s](uint32_t) { return s; },
                    "CompareScalar", loc);
}
template <typename T, typename U = uint8_t>
inline void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& a, const T& scalar, CMPMODE mode,
                     uint32_t count, TwinLoc loc = {}) {
  CompareScalar(dst, a, scalar, mode, count, loc);
}

template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& a,
                   const LocalTensor<T>& b, SELMODE mode, uint32_t count, TwinLoc loc = {}) {
  if (mode != SELMODE::VSEL_TENSOR_TENSOR_MODE) TwinFailAt(loc, "Select of two tensors needs VSEL_TENSOR_TENSOR_MODE");
  LocalTensor<uint8_t> mask = selMask.template ReinterpretCast<uint8_t>();
  TwinCheckRangeAt(dst, count, "Select", loc);
  TwinCheckRangeAt(a, count, "Select", loc);
  TwinCheckRangeAt(b, count, "Select", loc);
  TwinCheckRangeAt(mask, (count + 7) / 8, "Select mask", loc);
  twin::Op op(twin::V, loc, "Select");
  op.Read(mask.GetPhyAddr(), (count + 7) / 8);
  op.Read(a.GetPhyAddr(), uint64_t{count} * sizeof(T));
  op.Read(b.GetPhyAddr(), uint64_t{count} * sizeof(T));
  op.Write(dst.GetPhyAddr(), uint64_t{count} * sizeof(T));
  for (uint32_t i = 0; i < count; ++i) dst.TwinSet(i, twin::MaskBit(mask, i) ? a.TwinGet(i) : b.TwinGet(i));
}

template <typename T, typename U>
inline void Select(const LocalTensor<T>& dst, const LocalTensor<U>& selMask, const LocalTensor<T>& a, const T& scalar,
                   SELMODE mode, uint32_t count, TwinLoc loc = {}) {
  if (mode != SELMODE::VSEL_TENSOR_SCALAR_MODE)
    TwinFailAt(loc, "Select of a tensor and a scalar needs VSEL_TENSOR_SCALAR_MODE");
  LocalTensor<uint8_t> mask = selMask.template ReinterpretCast<uint8_t>();
  TwinCheckRangeAt(dst, count, "Select", loc);
  TwinCheckRangeAt(a, count, "Select", loc);
  TwinCheckRangeAt(mask, (count + 7) / 8, "Select mask", loc);
  twin::Op op(twin::V, loc, "Select");
  op.Read(mask.GetPhyAddr(), (count + 7) / 8);
  op.Read(a.GetPhyAddr(), uint64_t{count} * sizeof(T));
  op.Write(dst.GetPhyAddr(), uint64_t{count} * sizeof(T));
  for (uint32_t i = 0; i < count; ++i) dst.TwinSet(i, twin::MaskBit(mask, i) ? a.TwinGet(i) : scalar);
}

// ---- GatherMask: keeps the elements a pattern selects, packed at the start of dst.
struct GatherMaskParams {
  GatherMaskParams() = default;
  GatherMaskParams(uint8_t src0BlockStrideIn, uint16_t repeatTimesIn, uint16_t src0RepeatStrideIn,
                   uint8_t src1RepeatStrideIn)
      : src0BlockStride(src0BlockStrideIn), repeatTimes(repeatTimesIn), src0RepeatStride(src0RepeatStrideIn),
        src1RepeatStride(src1RepeatStrideIn) {}
  uint8_t src0BlockStride = DEFAULT_BLK_STRIDE;
  uint16_t repeatTimes = 0;
  uint16_t src0RepeatStride = DEFAULT_REPEAT_STRIDE;
  uint8_t src1RepeatStride = DEFAULT_REPEAT_STRIDE;
};

namespace twin {
// Built-in patterns 1..7: 1 even lanes, 2 odd lanes, 3..6 lane i % 4 == pattern - 3, 7 all lanes.
inline bool BuiltinPattern(uint8_t pattern, uint32_t e) {
  switch (pattern) {
    case 1: return e % 2 == 0;
    case 2: return e % 2 == 1;
    case 3: case 4: case 5: case 6: return e % 4 == static_cast<uint32_t>(pattern - 3);
    case 7: return true;
    default: return false;
  }
}

template <typename T, typename Pick>
inline void Gather(const LocalTensor<T>& dst, const LocalTensor<T>& src0, bool reduceMode, uint32_t mask,
                   const GatherMaskParams& p, uint64_t& rsvdCnt, const TwinLoc& loc, Pick pick) {
  Stride s{p.src0BlockStride, p.src0RepeatStride};
  Lanes lanes = reduceMode ? CountLanes<T>(mask) : Lanes{};
  if (!reduceMode) {
    lanes.bits[0] = lanes.bits[1] = ~uint64_t{0};
    lanes.repeats = p.repeatTimes;
    if (PerRepeat<T>() <= 64) lanes.bits[1] = 0;
  }
  std::vector<T> kept;
  ForLanes<T>(lanes, {Opnd(src0, s, false)}, "GatherMask", loc, [&](uint32_t r, uint32_t e) {
    if (pick(r, e)) kept.push_back(src0.TwinGet(static_cast<uint32_t>(At<T>(s, r, e))));
  });
  TwinCheckRangeAt(dst, kept.size(), "GatherMask", loc);
  Op(V, loc, "GatherMask").Write(dst.GetPhyAddr(), kept.size() * sizeof(T));
  for (size_t i = 0; i < kept.size(); ++i) dst.TwinSet(static_cast<uint32_t>(i), kept[i]);
  rsvdCnt = kept.size();
}
}  // namespace twin

template <typename T>
inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, uint8_t src1Pattern, bool reduceMode,
                       uint32_t mask, const GatherMaskParams& p, uint64_t& rsvdCnt, TwinLoc loc = {}) {
  if (src1Pattern < 1 || src1Pattern > 7) TwinFailAt(loc, "GatherMask built-in pattern must be in [1, 7]");
  twin::Gather(dst, src0, reduceMode, mask, p, rsvdCnt, loc,
               [src1Pattern](uint32_t, uint32_t e) { return twin::BuiltinPattern(src1Pattern, e); });
}

// A user pattern tensor: bit e of repeat r's pattern (src1RepeatStride 32-byte blocks apart) keeps lane e.
template <typename T, typename U>
inline void GatherMask(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<U>& src1Pattern,
                       bool reduceMode, uint32_t mask, const GatherMaskParams& p, uint64_t& rsvdCnt, TwinLoc loc = {}) {
  static_assert(sizeof(U) == sizeof(T) && std::is_integral_v<U>, "the pattern tensor is uint16_t/uint32_t like src0");
  LocalTensor<uint8_t> bits = src1Pattern.template ReinterpretCast<uint8_t>();
  twin::Op(twin::V, loc, "GatherMask").Read(bits.GetPhyAddr(), bits.GetSize());
  twin::Gather(dst, src0, reduceMode, mask, p, rsvdCnt, loc, [&](uint32_t r, uint32_t e) {
    uint64_t byte = uint64_t{r} * p.src1RepeatStride * 32 + e / 8;
    if (byte >= bits.GetSize()) TwinFailAt(loc, "GatherMask pattern tensor too short for the repeats");
    return ((bits.TwinGet(static_cast<uint32_t>(byte)) >> (e % 8)) & 1u) != 0;
  });
}

}  // namespace AscendC
