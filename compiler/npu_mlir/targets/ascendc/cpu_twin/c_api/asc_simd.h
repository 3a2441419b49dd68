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
// asc_sync_notify / asc_sync_wait / asc_sync. The cube part is c_api/asc_cube.h (included at the end).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

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
      std::memcpy(d, s, bytes);
    }
  }
}
}  // namespace AscendC::twin

// ---------------------------------------------------------------- system
__aicore__ inline void asc_init() { AscendC::ResetMask(); }
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
  std::memcpy(dst, src, size);
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

#include "c_api/asc_cube.h"
