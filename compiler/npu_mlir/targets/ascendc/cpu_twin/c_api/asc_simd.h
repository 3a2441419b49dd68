// AscendC's C API (asc-devkit include/c_api/asc_simd.h, npu_arch 2201) on the CPU twin: the
// instruction-level, pointer-based layer under the class API. Names, parameter order and units are
// asc-devkit's (sizes in bytes, bursts and gaps in 32-byte DataBlocks, repeat forms reading the
// vector mask register); each call runs on the pipe its documentation names (MTE2 for
// asc_copy_gm2ub, MTE3 for asc_copy_ub2gm, V for vector compute) through the same twin
// instructions as the class API, so the pipe checker sees it. `*_sync` forms end with a full
// barrier, as asc-devkit's asc_sync_post_process does (asc-devkit deprecates them for the plain
// form plus asc_sync). UB memory comes from asc_get_phy_buf_addr(offset).
//
// Modelled: asc_init, asc_get_phy_buf_addr, asc_get_block_idx/num, asc_copy_gm2ub / ub2gm (size
// and burst forms, _sync), asc_copy_ub2ub, asc_add/sub/mul/div/max/min (count, repeat, _sync),
// asc_add_scalar/mul_scalar/max_scalar/min_scalar (count, _sync), asc_exp/log/abs/sqrt/relu
// (count, _sync), asc_duplicate, asc_set_vector_mask / asc_set_mask_count / asc_set_mask_norm,
// asc_sync_notify / asc_sync_wait / asc_sync; conversions (asc_float2half, asc_half2float,
// asc_float2bfloat16, asc_bfloat162float, asc_int322float, asc_half2int32_* / asc_float2int32_* by
// rounding), reductions (asc_repeat_reduce_sum, asc_datablock_reduce_sum/max/min), asc_gather, and the
// atomic modes of UB -> GM copies (asc_set_atomic_add/max/min_<type>, asc_set_atomic_none). The
// compares and asc_select are c_api/asc_compare.h, sorting c_api/asc_sort.h, the cube part
// c_api/asc_cube.h (included at the end).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernel_operator.h"

#ifndef __ubuf__
#define __ubuf__
#endif

namespace AscendC::twin {
// A UB pointer as the twin's local tensor over the rest of UB (so ranges are checked against it).
template <typename T>
inline LocalTensor<T> UbTensor(T* p, const char* what, const TwinLoc& loc) {
  Space& ub = CoreSpace(TwinSpace::UB);
  const uint8_t* b = reinterpret_cast<const uint8_t*>(p);
  if (b < ub.mem.get() || b >= ub.mem.get() + ub.bytes) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "%s: the pointer is not in this core's UB (take UB addresses from asc_get_phy_buf_addr)",
                  what);
    TwinFailAt(loc, msg);
  }
  return LocalTensor<T>(p, static_cast<uint32_t>((ub.mem.get() + ub.bytes - b) / sizeof(T)), TPosition::VECCALC, -1);
}

template <typename T>
constexpr bool kCApiVectorType = std::is_same_v<T, half> || std::is_same_v<T, float> || std::is_same_v<T, int16_t> ||
                                 std::is_same_v<T, int32_t>;

// The C API's atomic mode (asc_set_atomic_*): UB -> GM copies store through it.
enum class CApiAtomicType { None, F32, F16, BF16, I32, I16, I8 };
inline thread_local CApiAtomicType capiAtomicType = CApiAtomicType::None;
inline void SetCApiAtomic(AtomicMode mode, CApiAtomicType type) {
  atomic = mode;
  capiAtomicType = type;
}
// Stores `bytes` at dst through the atomic mode, as elements of the type asc_set_atomic_* named.
inline void CApiGmStore(uint8_t* dst, const uint8_t* src, uint64_t bytes) {
  auto typed = [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> v(bytes / sizeof(T));
    std::memcpy(v.data(), src, v.size() * sizeof(T));
    GmStore(reinterpret_cast<T*>(dst), v.data(), v.size());
  };
  switch (atomic == AtomicMode::None ? CApiAtomicType::None : capiAtomicType) {
    case CApiAtomicType::F32: typed(float{}); break;
    case CApiAtomicType::F16: typed(half{}); break;
    case CApiAtomicType::BF16: typed(bfloat16_t{}); break;
    case CApiAtomicType::I32: typed(int32_t{}); break;
    case CApiAtomicType::I16: typed(int16_t{}); break;
    case CApiAtomicType::I8: typed(int8_t{}); break;
    default: std::memcpy(dst, src, bytes); break;
  }
}

// Bursts of len_burst DataBlocks, gaps in DataBlocks between one burst's end and the next one's start.
inline void CopyBursts(uint8_t* dst, const uint8_t* src, uint16_t n_burst, uint16_t len_burst, uint16_t src_gap,
                       uint16_t dst_gap, Op& op, bool to_ub) {
  for (uint32_t i = 0; i < n_burst; ++i) {
    const uint8_t* s = src + uint64_t{i} * (len_burst + src_gap) * 32u;
    uint8_t* d = dst + uint64_t{i} * (len_burst + dst_gap) * 32u;
    const uint64_t bytes = uint64_t{len_burst} * 32u;
    if (to_ub) {
      op.ReadGm(s, bytes);
      op.Write(d, bytes);
      std::memcpy(d, s, bytes);
    } else {
      op.Read(s, bytes);
      op.WriteGm(d, bytes);
      CApiGmStore(d, s, bytes);
    }
  }
}
}  // namespace AscendC::twin

// ---------------------------------------------------------------- system
// The core's control state at kernel start: vector mask, atomic mode.
__aicore__ inline void asc_init() {
  AscendC::InitSocState();
  AscendC::twin::capiAtomicType = AscendC::twin::CApiAtomicType::None;
}
// The UB address `offset` bytes into this core's Unified Buffer.
__aicore__ inline uint64_t asc_get_phy_buf_addr(uint64_t offset, AscendC::TwinLoc loc = {}) {
  AscendC::twin::Space& ub = AscendC::twin::CoreSpace(AscendC::TwinSpace::UB);
  if (offset >= ub.bytes) AscendC::TwinFailAt(loc, "asc_get_phy_buf_addr: offset past the end of UB");
  return reinterpret_cast<uint64_t>(ub.mem.get() + offset);
}
__aicore__ inline int64_t asc_get_block_idx() { return AscendC::GetBlockIdx(); }
__aicore__ inline int64_t asc_get_block_num() { return AscendC::GetBlockNum(); }

// ---------------------------------------------------------------- data move (MTE2 in, MTE3 out)
__aicore__ inline void asc_copy_gm2ub(__ubuf__ void* dst, __gm__ void* src, uint32_t size, AscendC::TwinLoc loc = {}) {
  auto ub = AscendC::twin::UbTensor(static_cast<uint8_t*>(dst), "asc_copy_gm2ub", loc);
  AscendC::TwinCheckRangeAt(ub, size, "asc_copy_gm2ub", loc);
  AscendC::twin::CheckLocalAlign(dst, 32, "asc_copy_gm2ub destination (UB)", loc);
  AscendC::twin::Op op(AscendC::twin::MTE2, loc, "asc_copy_gm2ub");
  op.ReadGm(src, size);
  op.Write(dst, size);
  std::memcpy(dst, src, size);
}
__aicore__ inline void asc_copy_gm2ub(__ubuf__ void* dst, __gm__ void* src, uint16_t n_burst, uint16_t len_burst,
                                      uint16_t src_gap, uint16_t dst_gap, AscendC::TwinLoc loc = {}) {
  auto ub = AscendC::twin::UbTensor(static_cast<uint8_t*>(dst), "asc_copy_gm2ub", loc);
  AscendC::TwinCheckRangeAt(ub, (uint64_t{n_burst} * (len_burst + dst_gap) - dst_gap) * 32u, "asc_copy_gm2ub", loc);
  AscendC::twin::CheckLocalAlign(dst, 32, "asc_copy_gm2ub destination (UB)", loc);
  AscendC::twin::Op op(AscendC::twin::MTE2, loc, "asc_copy_gm2ub");
  AscendC::twin::CopyBursts(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), n_burst, len_burst, src_gap,
                            dst_gap, op, true);
}
__aicore__ inline void asc_copy_ub2gm(__gm__ void* dst, __ubuf__ void* src, uint32_t size, AscendC::TwinLoc loc = {}) {
  auto ub = AscendC::twin::UbTensor(static_cast<uint8_t*>(src), "asc_copy_ub2gm", loc);
  AscendC::TwinCheckRangeAt(ub, size, "asc_copy_ub2gm", loc);
  AscendC::twin::CheckLocalAlign(src, 32, "asc_copy_ub2gm source (UB)", loc);
  AscendC::twin::Op op(AscendC::twin::MTE3, loc, "asc_copy_ub2gm");
  op.Read(src, size);
  op.WriteGm(dst, size);
  AscendC::twin::CApiGmStore(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), size);
}
__aicore__ inline void asc_copy_ub2gm(__gm__ void* dst, __ubuf__ void* src, uint16_t n_burst, uint16_t len_burst,
                                      uint16_t src_gap, uint16_t dst_gap, AscendC::TwinLoc loc = {}) {
  auto ub = AscendC::twin::UbTensor(static_cast<uint8_t*>(src), "asc_copy_ub2gm", loc);
  AscendC::TwinCheckRangeAt(ub, (uint64_t{n_burst} * (len_burst + src_gap) - src_gap) * 32u, "asc_copy_ub2gm", loc);
  AscendC::twin::CheckLocalAlign(src, 32, "asc_copy_ub2gm source (UB)", loc);
  AscendC::twin::Op op(AscendC::twin::MTE3, loc, "asc_copy_ub2gm");
  AscendC::twin::CopyBursts(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), n_burst, len_burst, src_gap,
                            dst_gap, op, false);
}
// UB -> UB on V (asc_copy_ub2ub: bytes).
__aicore__ inline void asc_copy_ub2ub(__ubuf__ void* dst, __ubuf__ void* src, uint32_t size, AscendC::TwinLoc loc = {}) {
  auto d = AscendC::twin::UbTensor(static_cast<uint8_t*>(dst), "asc_copy_ub2ub", loc);
  auto s = AscendC::twin::UbTensor(static_cast<uint8_t*>(src), "asc_copy_ub2ub", loc);
  AscendC::TwinCheckRangeAt(d, size, "asc_copy_ub2ub", loc);
  AscendC::TwinCheckRangeAt(s, size, "asc_copy_ub2ub", loc);
  AscendC::twin::Op op(AscendC::twin::V, loc, "asc_copy_ub2ub");
  op.Read(src, size);
  op.Write(dst, size);
  std::memmove(dst, src, size);
}
__aicore__ inline void asc_copy_gm2ub_sync(__ubuf__ void* dst, __gm__ void* src, uint32_t size, AscendC::TwinLoc loc = {}) {
  asc_copy_gm2ub(dst, src, size, loc);
  AscendC::twin::BarrierAll();
}
__aicore__ inline void asc_copy_ub2gm_sync(__gm__ void* dst, __ubuf__ void* src, uint32_t size, AscendC::TwinLoc loc = {}) {
  asc_copy_ub2gm(dst, src, size, loc);
  AscendC::twin::BarrierAll();
}

// ---------------------------------------------------------------- vector mask register
__aicore__ inline void asc_set_vector_mask(uint64_t mask1, uint64_t mask0) {
  AscendC::SetVectorMask<float>(mask1, mask0);  // the element type does not matter to the register
}
__aicore__ inline void asc_set_mask_count() { AscendC::SetMaskCount(); }
__aicore__ inline void asc_set_mask_norm() { AscendC::SetMaskNorm(); }

// ---------------------------------------------------------------- vector compute (V)
// Binary: count form (count elements), repeat form (repeat iterations of the mask register's
// lanes, strides in DataBlocks), and the _sync form.
#define ASC_TWIN_BINARY(NAME, OP)                                                                                   \
  template <typename T>                                                                                             \
  __aicore__ inline void NAME(__ubuf__ T* dst, __ubuf__ T* src0, __ubuf__ T* src1, uint32_t count,                \
                              AscendC::TwinLoc loc = {}) {                                                          \
    static_assert(AscendC::twin::kCApiVectorType<T>, #NAME " takes half, float, int16_t or int32_t");              \
    AscendC::OP(AscendC::twin::UbTensor(dst, #NAME, loc), AscendC::twin::UbTensor(src0, #NAME, loc),                \
                AscendC::twin::UbTensor(src1, #NAME, loc), static_cast<int32_t>(count), loc);                        \
  }                                                                                                                 \
  template <typename T>                                                                                             \
  __aicore__ inline void NAME(__ubuf__ T* dst, __ubuf__ T* src0, __ubuf__ T* src1, uint8_t repeat,                 \
                              uint8_t dst_block_stride, uint8_t src0_block_stride, uint8_t src1_block_stride,       \
                              uint8_t dst_repeat_stride, uint8_t src0_repeat_stride, uint8_t src1_repeat_stride,   \
                              AscendC::TwinLoc loc = {}) {                                                          \
    static_assert(AscendC::twin::kCApiVectorType<T>, #NAME " takes half, float, int16_t or int32_t");              \
    AscendC::OP<T, false>(AscendC::twin::UbTensor(dst, #NAME, loc), AscendC::twin::UbTensor(src0, #NAME, loc),      \
                          AscendC::twin::UbTensor(src1, #NAME, loc), uint64_t{0}, repeat,                            \
                          AscendC::BinaryRepeatParams(dst_block_stride, src0_block_stride, src1_block_stride,        \
                                                      dst_repeat_stride, src0_repeat_stride, src1_repeat_stride),    \
                          loc);                                                                                     \
  }                                                                                                                 \
  template <typename T>                                                                                             \
  __aicore__ inline void NAME##_sync(__ubuf__ T* dst, __ubuf__ T* src0, __ubuf__ T* src1, uint32_t count,          \
                                     AscendC::TwinLoc loc = {}) {                                                   \
    NAME(dst, src0, src1, count, loc);                                                                              \
    AscendC::twin::BarrierAll();                                                                                    \
  }
ASC_TWIN_BINARY(asc_add, Add)
ASC_TWIN_BINARY(asc_sub, Sub)
ASC_TWIN_BINARY(asc_mul, Mul)
ASC_TWIN_BINARY(asc_div, Div)
ASC_TWIN_BINARY(asc_max, Max)
ASC_TWIN_BINARY(asc_min, Min)
#undef ASC_TWIN_BINARY

#define ASC_TWIN_SCALAR(NAME, OP)                                                                                   \
  template <typename T, typename U>                                                                                 \
  __aicore__ inline void NAME(__ubuf__ T* dst, __ubuf__ T* src, U value, uint32_t count, AscendC::TwinLoc loc = {}) { \
    static_assert(AscendC::twin::kCApiVectorType<T>, #NAME " takes half, float, int16_t or int32_t");              \
    AscendC::OP(AscendC::twin::UbTensor(dst, #NAME, loc), AscendC::twin::UbTensor(src, #NAME, loc),                 \
                static_cast<T>(value), static_cast<int32_t>(count), loc);                                           \
  }                                                                                                                 \
  template <typename T, typename U>                                                                                 \
  __aicore__ inline void NAME##_sync(__ubuf__ T* dst, __ubuf__ T* src, U value, uint32_t count,                    \
                                     AscendC::TwinLoc loc = {}) {                                                   \
    NAME(dst, src, value, count, loc);                                                                              \
    AscendC::twin::BarrierAll();                                                                                    \
  }
ASC_TWIN_SCALAR(asc_add_scalar, Adds)
ASC_TWIN_SCALAR(asc_mul_scalar, Muls)
ASC_TWIN_SCALAR(asc_max_scalar, Maxs)
ASC_TWIN_SCALAR(asc_min_scalar, Mins)
#undef ASC_TWIN_SCALAR

#define ASC_TWIN_UNARY(NAME, OP)                                                                                    \
  template <typename T>                                                                                             \
  __aicore__ inline void NAME(__ubuf__ T* dst, __ubuf__ T* src, uint32_t count, AscendC::TwinLoc loc = {}) {       \
    static_assert(std::is_same_v<T, half> || std::is_same_v<T, float>, #NAME " takes half or float");              \
    AscendC::OP(AscendC::twin::UbTensor(dst, #NAME, loc), AscendC::twin::UbTensor(src, #NAME, loc),                 \
                static_cast<int32_t>(count), loc);                                                                  \
  }                                                                                                                 \
  template <typename T>                                                                                             \
  __aicore__ inline void NAME##_sync(__ubuf__ T* dst, __ubuf__ T* src, uint32_t count, AscendC::TwinLoc loc = {}) { \
    NAME(dst, src, count, loc);                                                                                     \
    AscendC::twin::BarrierAll();                                                                                    \
  }
ASC_TWIN_UNARY(asc_exp, Exp)
ASC_TWIN_UNARY(asc_log, Ln)
ASC_TWIN_UNARY(asc_abs, Abs)
ASC_TWIN_UNARY(asc_sqrt, Sqrt)
ASC_TWIN_UNARY(asc_relu, Relu)
#undef ASC_TWIN_UNARY

template <typename T, typename U>
__aicore__ inline void asc_duplicate(__ubuf__ T* dst, U value, uint32_t count, AscendC::TwinLoc loc = {}) {
  AscendC::Duplicate(AscendC::twin::UbTensor(dst, "asc_duplicate", loc), static_cast<T>(value),
                     static_cast<int32_t>(count), loc);
}

// ---------------------------------------------------------------- conversions (V), count forms
// asc_<from>2<to>[_<round>]: the plain name rounds to nearest even where precision is lost; _rn
// (nearest even), _rna (nearest, ties away), _rd (down), _ru (up), _rz (toward zero) pick the
// rounding of a float -> integer conversion, as asc-devkit names them. Through the class API's Cast.
#define ASC_TWIN_CONVERT(NAME, D, S, MODE)                                                                         \
  __aicore__ inline void NAME(__ubuf__ D* dst, __ubuf__ S* src, uint32_t count, AscendC::TwinLoc loc = {}) {     \
    AscendC::Cast(AscendC::twin::UbTensor(dst, #NAME, loc), AscendC::twin::UbTensor(src, #NAME, loc),            \
                  AscendC::RoundMode::MODE, count, loc);                                                          \
  }                                                                                                               \
  __aicore__ inline void NAME##_sync(__ubuf__ D* dst, __ubuf__ S* src, uint32_t count, AscendC::TwinLoc loc = {}) { \
    NAME(dst, src, count, loc);                                                                                   \
    AscendC::twin::BarrierAll();                                                                                  \
  }
ASC_TWIN_CONVERT(asc_float2half, half, float, CAST_RINT)
ASC_TWIN_CONVERT(asc_float2half_rn, half, float, CAST_RINT)
ASC_TWIN_CONVERT(asc_half2float, float, half, CAST_NONE)
ASC_TWIN_CONVERT(asc_float2bfloat16, bfloat16_t, float, CAST_RINT)
ASC_TWIN_CONVERT(asc_float2bfloat16_rn, bfloat16_t, float, CAST_RINT)
ASC_TWIN_CONVERT(asc_bfloat162float, float, bfloat16_t, CAST_NONE)
ASC_TWIN_CONVERT(asc_int322float, float, int32_t, CAST_RINT)
ASC_TWIN_CONVERT(asc_half2int32_rn, int32_t, half, CAST_RINT)
ASC_TWIN_CONVERT(asc_half2int32_rna, int32_t, half, CAST_ROUND)
ASC_TWIN_CONVERT(asc_half2int32_rd, int32_t, half, CAST_FLOOR)
ASC_TWIN_CONVERT(asc_half2int32_ru, int32_t, half, CAST_CEIL)
ASC_TWIN_CONVERT(asc_half2int32_rz, int32_t, half, CAST_TRUNC)
ASC_TWIN_CONVERT(asc_float2int32_rn, int32_t, float, CAST_RINT)
ASC_TWIN_CONVERT(asc_float2int32_rna, int32_t, float, CAST_ROUND)
ASC_TWIN_CONVERT(asc_float2int32_rd, int32_t, float, CAST_FLOOR)
ASC_TWIN_CONVERT(asc_float2int32_ru, int32_t, float, CAST_CEIL)
ASC_TWIN_CONVERT(asc_float2int32_rz, int32_t, float, CAST_TRUNC)
#undef ASC_TWIN_CONVERT

// ---------------------------------------------------------------- reductions (V)
// asc_repeat_reduce_sum: one sum per repeat (256 bytes of src) into consecutive dst elements; the
// repeat form takes the vector mask register's lanes, dst_repeat_stride elements between results
// (the class API's WholeReduceSum). asc_datablock_reduce_sum / _max / _min: one result per 32-byte
// block of src, written consecutively.
template <typename T>
__aicore__ inline void asc_repeat_reduce_sum(__ubuf__ T* dst, __ubuf__ T* src, uint8_t repeat, uint16_t dst_repeat_stride,
                                             uint16_t src_block_stride, uint16_t src_repeat_stride,
                                             AscendC::TwinLoc loc = {}) {
  static_assert(std::is_same_v<T, half> || std::is_same_v<T, float>, "asc_repeat_reduce_sum takes half or float");
  AscendC::WholeReduceSum<T, false>(AscendC::twin::UbTensor(dst, "asc_repeat_reduce_sum", loc),
                                    AscendC::twin::UbTensor(src, "asc_repeat_reduce_sum", loc), uint64_t{0}, repeat,
                                    dst_repeat_stride, src_block_stride, src_repeat_stride, loc);
}
template <typename T>
__aicore__ inline void asc_repeat_reduce_sum(__ubuf__ T* dst, __ubuf__ T* src, uint32_t count, AscendC::TwinLoc loc = {}) {
  constexpr uint32_t per = 256 / sizeof(T);
  if (count % per != 0) AscendC::TwinFailAt(loc, "asc_repeat_reduce_sum: count must be whole repeats (256 bytes each)");
  AscendC::SetMaskNorm();
  AscendC::SetVectorMask<T>(~uint64_t{0}, ~uint64_t{0});
  asc_repeat_reduce_sum(dst, src, static_cast<uint8_t>(count / per), 1, 1, 8, loc);
}
template <typename T>
__aicore__ inline void asc_repeat_reduce_sum_sync(__ubuf__ T* dst, __ubuf__ T* src, uint32_t count, AscendC::TwinLoc loc = {}) {
  asc_repeat_reduce_sum(dst, src, count, loc);
  AscendC::twin::BarrierAll();
}

namespace AscendC::twin {
template <typename T, typename Step>
inline void DatablockReduce(T* dst, T* src, uint32_t count, const char* name, const TwinLoc& loc, Step step) {
  static_assert(std::is_same_v<T, half> || std::is_same_v<T, float>, "asc_datablock_reduce_* takes half or float");
  constexpr uint32_t per = 32 / sizeof(T);
  if (count % per != 0) TwinFailAt(loc, "asc_datablock_reduce_*: count must be whole 32-byte blocks");
  auto s = UbTensor(src, name, loc);
  auto d = UbTensor(dst, name, loc);
  TwinCheckRangeAt(s, count, name, loc);
  TwinCheckRangeAt(d, count / per, name, loc);
  Op op(V, loc, name);
  op.Read(src, uint64_t{count} * sizeof(T));
  op.Write(dst, uint64_t{count / per} * sizeof(T));
  for (uint32_t b = 0; b < count / per; ++b) {
    float acc = static_cast<float>(s.TwinGet(b * per));
    for (uint32_t e = 1; e < per; ++e) acc = step(acc, static_cast<float>(s.TwinGet(b * per + e)));
    d.TwinSet(b, static_cast<T>(acc));
  }
}
}  // namespace AscendC::twin
#define ASC_TWIN_DATABLOCK_REDUCE(NAME, STEP)                                                                      \
  template <typename T>                                                                                           \
  __aicore__ inline void NAME(__ubuf__ T* dst, __ubuf__ T* src, uint32_t count, AscendC::TwinLoc loc = {}) {     \
    AscendC::twin::DatablockReduce(dst, src, count, #NAME, loc, AscendC::twin::STEP);                           \
  }                                                                                                               \
  template <typename T>                                                                                           \
  __aicore__ inline void NAME##_sync(__ubuf__ T* dst, __ubuf__ T* src, uint32_t count, AscendC::TwinLoc loc = {}) { \
    NAME(dst, src, count, loc);                                                                                   \
    AscendC::twin::BarrierAll();                                                                                  \
  }
ASC_TWIN_DATABLOCK_REDUCE(asc_datablock_reduce_sum, StepSum)
ASC_TWIN_DATABLOCK_REDUCE(asc_datablock_reduce_max, StepMax)
ASC_TWIN_DATABLOCK_REDUCE(asc_datablock_reduce_min, StepMin)
#undef ASC_TWIN_DATABLOCK_REDUCE

// ---------------------------------------------------------------- gather (V)
// dst[i] = the element src_offset[i] bytes past src (asc-devkit's vgather: byte offsets from src).
template <typename T>
__aicore__ inline void asc_gather(__ubuf__ T* dst, __ubuf__ T* src, __ubuf__ uint32_t* src_offset, uint32_t count,
                                  AscendC::TwinLoc loc = {}) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "asc_gather takes 16- and 32-bit types");
  auto d = AscendC::twin::UbTensor(dst, "asc_gather", loc);
  auto o = AscendC::twin::UbTensor(src_offset, "asc_gather", loc);
  auto s = AscendC::twin::UbTensor(reinterpret_cast<uint8_t*>(src), "asc_gather", loc);
  AscendC::TwinCheckRangeAt(d, count, "asc_gather", loc);
  AscendC::TwinCheckRangeAt(o, count, "asc_gather", loc);
  AscendC::twin::Op op(AscendC::twin::V, loc, "asc_gather");
  op.Read(src_offset, uint64_t{count} * sizeof(uint32_t));
  op.Write(dst, uint64_t{count} * sizeof(T));
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t off = o.TwinGet(i);
    if (off % sizeof(T) != 0) AscendC::TwinFailAt(loc, "asc_gather: an offset is not a multiple of the element size");
    AscendC::TwinCheckRangeAt(s, uint64_t{off} + sizeof(T), "asc_gather source (offset past UB)", loc);
    op.Read(reinterpret_cast<uint8_t*>(src) + off, sizeof(T));
    T v;
    std::memcpy(&v, reinterpret_cast<uint8_t*>(src) + off, sizeof(T));
    d.TwinSet(i, v);
  }
}
template <typename T>
__aicore__ inline void asc_gather_sync(__ubuf__ T* dst, __ubuf__ T* src, __ubuf__ uint32_t* src_offset, uint32_t count,
                                       AscendC::TwinLoc loc = {}) {
  asc_gather(dst, src, src_offset, count, loc);
  AscendC::twin::BarrierAll();
}

// ---------------------------------------------------------------- atomics
// asc_set_atomic_<op>_<type>: later UB -> GM copies (asc_copy_ub2gm) combine with GM as elements of
// that type (add / max / min) instead of overwriting it, until asc_set_atomic_none.
#define ASC_TWIN_ATOMIC(NAME, MODE, TYPE) \
  __aicore__ inline void NAME() { AscendC::twin::SetCApiAtomic(AscendC::twin::AtomicMode::MODE, AscendC::twin::CApiAtomicType::TYPE); }
ASC_TWIN_ATOMIC(asc_set_atomic_add_float, Add, F32)
ASC_TWIN_ATOMIC(asc_set_atomic_add_float16, Add, F16)
ASC_TWIN_ATOMIC(asc_set_atomic_add_bfloat, Add, BF16)
ASC_TWIN_ATOMIC(asc_set_atomic_add_int, Add, I32)
ASC_TWIN_ATOMIC(asc_set_atomic_add_int16, Add, I16)
ASC_TWIN_ATOMIC(asc_set_atomic_add_int8, Add, I8)
ASC_TWIN_ATOMIC(asc_set_atomic_max_float, Max, F32)
ASC_TWIN_ATOMIC(asc_set_atomic_max_float16, Max, F16)
ASC_TWIN_ATOMIC(asc_set_atomic_max_int, Max, I32)
ASC_TWIN_ATOMIC(asc_set_atomic_min_float, Min, F32)
ASC_TWIN_ATOMIC(asc_set_atomic_min_float16, Min, F16)
ASC_TWIN_ATOMIC(asc_set_atomic_min_int, Min, I32)
ASC_TWIN_ATOMIC(asc_set_atomic_none, None, None)
#undef ASC_TWIN_ATOMIC

// ---------------------------------------------------------------- synchronization
// asc_sync_notify(PIPE_MTE2, PIPE_V, id) / asc_sync_wait(PIPE_MTE2, PIPE_V, id): SetFlag / WaitFlag
// of the pipe pair; asc_sync(pipe): PipeBarrier; asc_sync(): every pipe waits for every other.
template <typename Pipe, typename TPipe>
__aicore__ inline void asc_sync_notify(Pipe pipe, TPipe tpipe, int id, AscendC::TwinLoc loc = {}) {
  const int from = AscendC::twin::PipeOf(static_cast<pipe_t>(pipe)), to = AscendC::twin::PipeOf(static_cast<pipe_t>(tpipe));
  if (from < 0 || to < 0) AscendC::TwinFailAt(loc, "asc_sync_notify takes two of PIPE_S/V/M/MTE1/MTE2/MTE3/FIX");
  AscendC::twin::SignalFlag(from, to, id, loc);
}
template <typename Pipe, typename TPipe>
__aicore__ inline void asc_sync_wait(Pipe pipe, TPipe tpipe, int id, AscendC::TwinLoc loc = {}) {
  const int from = AscendC::twin::PipeOf(static_cast<pipe_t>(pipe)), to = AscendC::twin::PipeOf(static_cast<pipe_t>(tpipe));
  if (from < 0 || to < 0) AscendC::TwinFailAt(loc, "asc_sync_wait takes two of PIPE_S/V/M/MTE1/MTE2/MTE3/FIX");
  AscendC::twin::AwaitFlag(from, to, id, loc);
}
template <typename Pipe>
__aicore__ inline void asc_sync(Pipe pipe) {
  if (static_cast<pipe_t>(pipe) == PIPE_ALL) AscendC::twin::BarrierAll();  // one pipe's instructions issue in order
}
__aicore__ inline void asc_sync() { AscendC::twin::BarrierAll(); }

#include "c_api/asc_compare.h"
#include "c_api/asc_sort.h"
#include "c_api/asc_cube.h"
