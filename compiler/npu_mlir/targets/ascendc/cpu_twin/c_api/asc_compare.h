// Compare and select in AscendC's C API on the CPU twin (asc-devkit vector_compute, npu_arch 2201),
// on PIPE_V like the class API's Compare / Select:
//   asc_eq / asc_ne / asc_lt / asc_gt / asc_le / asc_ge (half, float), repeat form with the six
//     strides: into a bit mask in UB (bit e of repeat r at bit r * lanes + e, little-endian bytes,
//     contiguous: the destination strides have no effect, as for the class API's bit-mask
//     Compare), or - without dst - into the CMPMASK register, one 256-byte repeat;
//   asc_eq_scalar ... asc_ge_scalar: the same against one value, into a UB bit mask;
//   asc_get_cmp_mask / asc_set_cmp_mask: CMPMASK (128 bits) to / from UB;
//   asc_select (count, repeat and _sync forms): dst = bit e of CMPMASK ? src0 : src1, the same
//     mask bits for every repeat (vsel's register mode).
// Lanes follow the vector mask register (normal or counter mode) as for every repeat form; a
// lane the mask leaves out writes a 0 bit.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernel_operator.h"

namespace AscendC::twin {
inline thread_local uint64_t cmpMask[2] = {0, 0};  // the CMPMASK register

template <typename T>
constexpr bool kCApiCompareType = std::is_same_v<T, half> || std::is_same_v<T, float>;

// Compares src0 with src1 (or, src1 null, with `scalar`) over the register mask's lanes; bit(r, e,
// value) receives each result.
template <typename T, typename Bit>
inline void CApiCompare(T* src0, T* src1, T scalar, const Lanes& lanes, const BinaryRepeatParams& p, CMPMODE mode,
                        const char* name, const TwinLoc& loc, Bit bit) {
  auto a = UbTensor(src0, name, loc);
  Stride s0{p.src0BlkStride, p.src0RepStride}, s1{p.src1BlkStride, p.src1RepStride};
  auto x = [&](uint32_t r, uint32_t e) { return static_cast<float>(a.TwinGet(static_cast<uint32_t>(At<T>(s0, r, e)))); };
  if (src1 == nullptr) {
    ForLanes<T>(lanes, {Opnd(a, s0, false)}, name, loc,
                [&](uint32_t r, uint32_t e) { bit(r, e, Compare(x(r, e), static_cast<float>(scalar), mode)); });
    return;
  }
  auto b = UbTensor(src1, name, loc);
  ForLanes<T>(lanes, {Opnd(a, s0, false), Opnd(b, s1, false)}, name, loc, [&](uint32_t r, uint32_t e) {
    bit(r, e, Compare(x(r, e), static_cast<float>(b.TwinGet(static_cast<uint32_t>(At<T>(s1, r, e)))), mode));
  });
}

template <typename T>
inline void CApiCompareToUb(uint8_t* dst, T* src0, T* src1, T scalar, uint8_t repeat, const BinaryRepeatParams& p,
                            CMPMODE mode, const char* name, const TwinLoc& loc) {
  static_assert(kCApiCompareType<T>, "the C API's compares take half or float");
  const Lanes lanes = RegisterMask<T>(repeat);
  const uint64_t bytes = uint64_t{lanes.repeats} * PerRepeat<T>() / 8u;
  auto d = UbTensor(dst, name, loc);
  TwinCheckRangeAt(d, bytes, name, loc);
  CheckLocalAlign(dst, 32, name, loc);
  std::vector<uint8_t> bits(bytes, 0);
  CApiCompare(src0, src1, scalar, lanes, p, mode, name, loc, [&](uint32_t r, uint32_t e, bool v) {
    const uint64_t i = uint64_t{r} * PerRepeat<T>() + e;
    if (v) bits[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
  });
  Op(V, loc, name).Write(dst, bytes);
  std::memcpy(dst, bits.data(), bytes);
}

template <typename T>
inline void CApiCompareToRegister(T* src0, T* src1, const BinaryRepeatParams& p, CMPMODE mode, const char* name,
                                  const TwinLoc& loc) {
  static_assert(kCApiCompareType<T>, "the C API's compares take half or float");
  uint64_t bits[2] = {0, 0};
  CApiCompare(src0, src1, T(0), RegisterMask<T>(1), p, mode, name, loc, [&](uint32_t, uint32_t e, bool v) {
    if (v) bits[e / 64] |= uint64_t{1} << (e % 64);
  });
  cmpMask[0] = bits[0];
  cmpMask[1] = bits[1];
}

template <typename T>
inline void CApiSelect(T* dst, T* src0, T* src1, const Lanes& lanes, const BinaryRepeatParams& p, const TwinLoc& loc) {
  static_assert(kCApiCompareType<T>, "asc_select takes half or float");
  auto d = UbTensor(dst, "asc_select", loc), a = UbTensor(src0, "asc_select", loc), b = UbTensor(src1, "asc_select", loc);
  Stride sd{p.dstBlkStride, p.dstRepStride}, s0{p.src0BlkStride, p.src0RepStride}, s1{p.src1BlkStride, p.src1RepStride};
  const uint64_t mask[2] = {cmpMask[0], cmpMask[1]};
  ForLanes<T>(lanes, {Opnd(a, s0, false), Opnd(b, s1, false), Opnd(d, sd, true)}, "asc_select", loc,
              [&](uint32_t r, uint32_t e) {
                const bool pick0 = (mask[e / 64] >> (e % 64)) & 1u;
                d.TwinSet(static_cast<uint32_t>(At<T>(sd, r, e)),
                          pick0 ? a.TwinGet(static_cast<uint32_t>(At<T>(s0, r, e)))
                                : b.TwinGet(static_cast<uint32_t>(At<T>(s1, r, e))));
              });
}
}  // namespace AscendC::twin

#define ASC_TWIN_COMPARE(NAME, MODE)                                                                                \
  template <typename T>                                                                                             \
  __aicore__ inline void NAME(__ubuf__ uint8_t* dst, __ubuf__ T* src0, __ubuf__ T* src1, uint8_t repeat,           \
                              uint8_t dst_block_stride, uint8_t src0_block_stride, uint8_t src1_block_stride,       \
                              uint8_t dst_repeat_stride, uint8_t src0_repeat_stride, uint8_t src1_repeat_stride,   \
                              AscendC::TwinLoc loc = {}) {                                                          \
    AscendC::twin::CApiCompareToUb(dst, src0, src1, T(0), repeat,                                                  \
                                   AscendC::BinaryRepeatParams(dst_block_stride, src0_block_stride,                \
                                                               src1_block_stride, dst_repeat_stride,               \
                                                               src0_repeat_stride, src1_repeat_stride),            \
                                   AscendC::CMPMODE::MODE, #NAME, loc);                                             \
  }                                                                                                                 \
  template <typename T>                                                                                             \
  __aicore__ inline void NAME(__ubuf__ T* src0, __ubuf__ T* src1, uint8_t repeat, uint8_t dst_block_stride,        \
                              uint8_t src0_block_stride, uint8_t src1_block_stride, uint8_t dst_repeat_stride,      \
                              uint8_t src0_repeat_stride, uint8_t src1_repeat_stride, AscendC::TwinLoc loc = {}) { \
    (void)repeat; /* the register form always compares one 256-byte repeat */                                      \
    AscendC::twin::CApiCompareToRegister(src0, src1,                                                               \
                                         AscendC::BinaryRepeatParams(dst_block_stride, src0_block_stride,          \
                                                                     src1_block_stride, dst_repeat_stride,         \
                                                                     src0_repeat_stride, src1_repeat_stride),      \
                                         AscendC::CMPMODE::MODE, #NAME, loc);                                       \
  }                                                                                                                 \
  template <typename T>                                                                                             \
  __aicore__ inline void NAME##_sync(__ubuf__ uint8_t* dst, __ubuf__ T* src0, __ubuf__ T* src1, uint8_t repeat,    \
                                     uint8_t dst_block_stride, uint8_t src0_block_stride, uint8_t src1_block_stride, \
                                     uint8_t dst_repeat_stride, uint8_t src0_repeat_stride,                        \
                                     uint8_t src1_repeat_stride, AscendC::TwinLoc loc = {}) {                       \
    NAME(dst, src0, src1, repeat, dst_block_stride, src0_block_stride, src1_block_stride, dst_repeat_stride,       \
         src0_repeat_stride, src1_repeat_stride, loc);                                                              \
    AscendC::twin::BarrierAll();                                                                                    \
  }
ASC_TWIN_COMPARE(asc_eq, EQ)
ASC_TWIN_COMPARE(asc_ne, NE)
ASC_TWIN_COMPARE(asc_lt, LT)
ASC_TWIN_COMPARE(asc_gt, GT)
ASC_TWIN_COMPARE(asc_le, LE)
ASC_TWIN_COMPARE(asc_ge, GE)
#undef ASC_TWIN_COMPARE

// asc_<cmp>_scalar: src against one value, into a UB bit mask (strides as for the tensor forms).
#define ASC_TWIN_COMPARE_SCALAR(NAME, MODE)                                                                         \
  template <typename T>                                                                                             \
  __aicore__ inline void NAME(__ubuf__ uint8_t* dst, __ubuf__ T* src, T value, uint8_t repeat,                     \
                              uint16_t dst_block_stride, uint16_t src_block_stride, uint16_t dst_repeat_stride,    \
                              uint16_t src_repeat_stride, AscendC::TwinLoc loc = {}) {                              \
    AscendC::twin::CApiCompareToUb(                                                                                \
        dst, src, static_cast<T*>(nullptr), value, repeat,                                                         \
        AscendC::BinaryRepeatParams(static_cast<uint8_t>(dst_block_stride), static_cast<uint8_t>(src_block_stride), \
                                    1, static_cast<uint8_t>(dst_repeat_stride),                                    \
                                    static_cast<uint8_t>(src_repeat_stride), 8),                                   \
        AscendC::CMPMODE::MODE, #NAME, loc);                                                                        \
  }                                                                                                                 \
  template <typename T>                                                                                             \
  __aicore__ inline void NAME##_sync(__ubuf__ uint8_t* dst, __ubuf__ T* src, T value, uint8_t repeat,              \
                                     uint16_t dst_block_stride, uint16_t src_block_stride,                         \
                                     uint16_t dst_repeat_stride, uint16_t src_repeat_stride,                       \
                                     AscendC::TwinLoc loc = {}) {                                                   \
    NAME(dst, src, value, repeat, dst_block_stride, src_block_stride, dst_repeat_stride, src_repeat_stride, loc);  \
    AscendC::twin::BarrierAll();                                                                                    \
  }
ASC_TWIN_COMPARE_SCALAR(asc_eq_scalar, EQ)
ASC_TWIN_COMPARE_SCALAR(asc_ne_scalar, NE)
ASC_TWIN_COMPARE_SCALAR(asc_lt_scalar, LT)
ASC_TWIN_COMPARE_SCALAR(asc_gt_scalar, GT)
ASC_TWIN_COMPARE_SCALAR(asc_le_scalar, LE)
ASC_TWIN_COMPARE_SCALAR(asc_ge_scalar, GE)
#undef ASC_TWIN_COMPARE_SCALAR

// CMPMASK <-> 16 bytes of UB.
__aicore__ inline void asc_get_cmp_mask(__ubuf__ void* dst, AscendC::TwinLoc loc = {}) {
  auto d = AscendC::twin::UbTensor(static_cast<uint8_t*>(dst), "asc_get_cmp_mask", loc);
  AscendC::TwinCheckRangeAt(d, 16, "asc_get_cmp_mask", loc);
  AscendC::twin::CheckLocalAlign(dst, 32, "asc_get_cmp_mask", loc);
  AscendC::twin::Op(AscendC::twin::V, loc, "asc_get_cmp_mask").Write(dst, 16);
  std::memcpy(dst, AscendC::twin::cmpMask, 16);
}
__aicore__ inline void asc_set_cmp_mask(__ubuf__ void* src, AscendC::TwinLoc loc = {}) {
  auto s = AscendC::twin::UbTensor(static_cast<uint8_t*>(src), "asc_set_cmp_mask", loc);
  AscendC::TwinCheckRangeAt(s, 16, "asc_set_cmp_mask", loc);
  AscendC::twin::CheckLocalAlign(src, 32, "asc_set_cmp_mask", loc);
  AscendC::twin::Op(AscendC::twin::V, loc, "asc_set_cmp_mask").Read(src, 16);
  std::memcpy(AscendC::twin::cmpMask, src, 16);
}

template <typename T>
__aicore__ inline void asc_select(__ubuf__ T* dst, __ubuf__ T* src0, __ubuf__ T* src1, uint32_t count,
                                  AscendC::TwinLoc loc = {}) {
  AscendC::twin::CApiSelect(dst, src0, src1, AscendC::twin::CountLanes<T>(count), AscendC::BinaryRepeatParams(), loc);
}
template <typename T>
__aicore__ inline void asc_select(__ubuf__ T* dst, __ubuf__ T* src0, __ubuf__ T* src1, uint8_t repeat,
                                  uint8_t dst_block_stride, uint8_t src0_block_stride, uint8_t src1_block_stride,
                                  uint8_t dst_repeat_stride, uint8_t src0_repeat_stride, uint8_t src1_repeat_stride,
                                  AscendC::TwinLoc loc = {}) {
  AscendC::twin::CApiSelect(dst, src0, src1, AscendC::twin::RegisterMask<T>(repeat),
                            AscendC::BinaryRepeatParams(dst_block_stride, src0_block_stride, src1_block_stride,
                                                        dst_repeat_stride, src0_repeat_stride, src1_repeat_stride),
                            loc);
}
template <typename T>
__aicore__ inline void asc_select_sync(__ubuf__ T* dst, __ubuf__ T* src0, __ubuf__ T* src1, uint32_t count,
                                       AscendC::TwinLoc loc = {}) {
  asc_select(dst, src0, src1, count, loc);
  AscendC::twin::BarrierAll();
}
