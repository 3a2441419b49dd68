// The cube part of AscendC's C API on the CPU twin (asc-devkit include/c_api/cube_datamove and
// cube_compute, npu_arch 2201): GM -> L1 (asc_copy_gm2l1, asc_copy_gm2l1_nd2nz), L1 -> L0A / L0B
// (asc_copy_l12l0a / asc_copy_l12l0b, the transposing asc_copy_l12l0a_trans / asc_copy_l12l0b_trans),
// asc_mmad into L0C, and the Fixpipe out of it (asc_copy_l0c2gm, with asc_set_l0c_copy_params for
// NZ -> ND over several matrices and asc_set_l0c_copy_prequant for a scalar quantization; asc_copy_l0c2l1
// the same into L1).
// Names, parameter order and units are asc-devkit's: asc_mmad takes (m, k, n) as its
// left_height / n_dim / right_width, asc_copy_l0c2gm (n_size, m_size, dst stride, src stride in
// 16-element rows, unit flag, quant_pre, relu, channel split, nz2nd). Each call is the class API's
// instruction underneath (DataCopy Nd2Nz, LoadData, LoadDataWithTranspose, Mmad, Fixpipe), on its
// pipe, with the hardware's fractal layouts (twin/cube.h), so the pipe checker sees C-API kernels.
//
// Local memory is declared as the C API documents it, arrays in their buffer (`__cbuf__ half
// a_l1[N]`, `__ca__`, `__cb__`, `__cc__`): the twin tracks each array as a region of that buffer
// (twin::AdoptLocal) from the first instruction that addresses it.
//
// The 3D (img2col) asc_copy_l12l0a / asc_copy_l12l0b read the feature-map registers
// (asc_set_l13d_fmatrix, asc_set_l13d_padding, asc_set_l13d_size, asc_set_l13d_rpt) and are
// twin/load3d.h's Load3Dv2.
//
// The bias table: asc_copy_l12bt fills an array declared `__biasbuf__ float bias_bt[N]` (its address
// as the uint64_t destination) on MTE1, and asc_mmad with c_matrix_source starts C from it. On a
// 910B the bias-table address travels in the upper 32 bits of c_matrix (the C address register),
// which a host pointer cannot carry: the twin's asc_mmad reads the array the core's last
// asc_copy_l12bt filled.
//
// Included by c_api/asc_simd.h (it uses its burst copy). Not modelled: sparse and int4 forms,
// channel split, unit flags.
// The fixpipe buffer (asc_copy_l12fb, asc_set_l0c2gm_quant) gives asc_copy_l0c2gm its per-channel modes.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernel_operator.h"

#ifndef __cbuf__
#define __cbuf__
#endif
#ifndef __ca__
#define __ca__
#endif
#ifndef __cb__
#define __cb__
#endif
#ifndef __cc__
#define __cc__
#endif
#ifndef __fbuf__
#define __fbuf__
#endif
#ifndef __biasbuf__
#define __biasbuf__
#endif

// asc_copy_gm2l1's pad mode: the twin models no padding.
enum pad_t : uint8_t { PAD_NONE = 0, PAD_MODE1, PAD_MODE2, PAD_MODE3, PAD_MODE4, PAD_MODE5, PAD_MODE6, PAD_MODE7, PAD_MODE8 };

namespace AscendC::twin {
// The C-API array `p` of buffer `kind` as the class API's local tensor, `elements` of T needed from p.
template <typename T>
inline LocalTensor<T> CubeTensor(T* p, TwinSpace kind, TPosition pos, uint64_t elements, const char* what,
                                 const TwinLoc& loc) {
  Space& s = AdoptLocal(kind, p, elements * sizeof(T), what, loc);
  const uint8_t* b = reinterpret_cast<const uint8_t*>(p);
  return LocalTensor<T>(p, static_cast<uint32_t>((s.mem.get() + s.bytes - b) / sizeof(T)), pos, -1);
}

template <typename T>
constexpr uint32_t kFractal = 512 / sizeof(T);

// Elements a 2D L1 -> L0 load reads from its source and writes to its destination.
inline uint64_t LoadSourceFractals(uint16_t start, uint8_t repeat, uint16_t stride, uint32_t perIteration) {
  return repeat == 0 ? 0 : (uint64_t{start} + uint64_t{repeat - 1u} * stride + 1u) * perIteration;
}
}  // namespace AscendC::twin

// ---------------------------------------------------------------- GM -> L1 (MTE2)
// Bytes, or bursts of burst_len 32-byte blocks with src_stride / dst_stride blocks between them.
__aicore__ inline void asc_copy_gm2l1(__cbuf__ void* dst, __gm__ void* src, uint16_t n_burst, uint16_t burst_len,
                                      uint16_t src_stride, uint16_t dst_stride, pad_t pad_mode,
                                      AscendC::TwinLoc loc = {}) {
  if (pad_mode != PAD_NONE) AscendC::TwinFailAt(loc, "asc_copy_gm2l1: the twin models pad_mode PAD_NONE only");
  const uint64_t span = n_burst == 0 ? 0 : (uint64_t{n_burst} * (burst_len + dst_stride) - dst_stride) * 32u;
  auto l1 = AscendC::twin::CubeTensor(static_cast<uint8_t*>(dst), AscendC::TwinSpace::L1, AscendC::TPosition::A1, span,
                                      "asc_copy_gm2l1", loc);
  AscendC::TwinCheckRangeAt(l1, span, "asc_copy_gm2l1", loc);
  AscendC::twin::Op op(AscendC::twin::MTE2, loc, "asc_copy_gm2l1");
  AscendC::twin::CopyBursts(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), n_burst, burst_len, src_stride,
                            dst_stride, op, true);
}
__aicore__ inline void asc_copy_gm2l1(__cbuf__ void* dst, __gm__ void* src, uint32_t size, AscendC::TwinLoc loc = {}) {
  if (size % 32 != 0) AscendC::TwinFailAt(loc, "asc_copy_gm2l1: size must be a multiple of 32 bytes");
  asc_copy_gm2l1(dst, src, 1, static_cast<uint16_t>(size / 32), 0, 0, PAD_NONE, loc);
}
__aicore__ inline void asc_copy_gm2l1_sync(__cbuf__ void* dst, __gm__ void* src, uint32_t size, AscendC::TwinLoc loc = {}) {
  asc_copy_gm2l1(dst, src, size, loc);
  AscendC::twin::BarrierAll();
}

// ND (row stride src_d_value elements) -> NZ, Nd2NzParams' members in their order.
template <typename T>
__aicore__ inline void asc_copy_gm2l1_nd2nz(__cbuf__ T* dst, __gm__ T* src, uint16_t nd_num, uint16_t n_value,
                                            uint16_t d_value, uint16_t src_nd_matrix_stride, uint16_t src_d_value,
                                            uint16_t dst_nz_c0_stride, uint16_t dst_nz_n_stride,
                                            uint16_t dst_nz_matrix_stride, AscendC::TwinLoc loc = {}) {
  constexpr uint32_t c0 = AscendC::TwinC0<T>();
  const uint64_t groups = (d_value + c0 - 1u) / c0;
  const uint64_t elements = nd_num == 0 || n_value == 0 || d_value == 0
                                ? 0
                                : uint64_t{nd_num - 1u} * dst_nz_matrix_stride +
                                      ((groups - 1u) * dst_nz_c0_stride + uint64_t{n_value - 1u} * dst_nz_n_stride + 1u) * c0;
  auto l1 = AscendC::twin::CubeTensor(dst, AscendC::TwinSpace::L1, AscendC::TPosition::A1, elements,
                                      "asc_copy_gm2l1_nd2nz", loc);
  AscendC::GlobalTensor<T> gm;
  gm.SetGlobalBuffer(src);
  AscendC::DataCopy(l1, gm,
                    AscendC::Nd2NzParams(nd_num, n_value, d_value, src_nd_matrix_stride, src_d_value, dst_nz_c0_stride,
                                         dst_nz_n_stride, dst_nz_matrix_stride),
                    loc);
}
template <typename T>
__aicore__ inline void asc_copy_gm2l1_nd2nz_sync(__cbuf__ T* dst, __gm__ T* src, uint16_t nd_num, uint16_t n_value,
                                                 uint16_t d_value, uint16_t src_nd_matrix_stride, uint16_t src_d_value,
                                                 uint16_t dst_nz_c0_stride, uint16_t dst_nz_n_stride,
                                                 uint16_t dst_nz_matrix_stride, AscendC::TwinLoc loc = {}) {
  asc_copy_gm2l1_nd2nz(dst, src, nd_num, n_value, d_value, src_nd_matrix_stride, src_d_value, dst_nz_c0_stride,
                       dst_nz_n_stride, dst_nz_matrix_stride, loc);
  AscendC::twin::BarrierAll();
}

// asc_fill_l1 / asc_fill_l0a / asc_fill_l0b: repeat iterations of block_num blocks (32 bytes in L1,
// a 512-byte fractal in L0A / L0B), dst_gap blocks apart, set to value (a 16-bit destination takes
// a half's bits or the low 16 bits of a uint32_t; a 32-bit one a uint32_t's bits): the class API's
// InitConstValue on that buffer.
union asc_fill_value_config {
  uint64_t config = 0;
  struct {
    uint64_t repeat : 15;
    uint64_t reserved1 : 1;
    uint64_t block_num : 15;
    uint64_t reserved2 : 1;
    uint64_t dst_gap : 15;
    uint64_t reserved3 : 17;
  };
};
namespace AscendC::twin {
template <typename T, typename V>
inline void CApiFill(T* dst, V value, const asc_fill_value_config& config, TwinSpace kind, TPosition pos,
                     const char* name, const TwinLoc& loc) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "asc_fill_* fills 16- or 32-bit elements");
  static_assert(std::is_same_v<V, half> || std::is_same_v<V, uint32_t> || std::is_same_v<V, bfloat16_t>,
                "asc_fill_* takes a half, bfloat16_t or uint32_t value");
  if (sizeof(T) == 4 && sizeof(V) == 2) {
    char msg[120];
    std::snprintf(msg, sizeof msg, "%s of a 32-bit destination with a 16-bit value is not modelled by the twin", name);
    TwinFailAt(loc, msg);
  }
  T fill;
  if constexpr (sizeof(V) == sizeof(T)) {
    std::memcpy(&fill, &value, sizeof fill);
  } else {
    const uint16_t bits = static_cast<uint16_t>(value);
    std::memcpy(&fill, &bits, sizeof fill);
  }
  const uint64_t repeat = config.repeat, blocks = config.block_num, gap = config.dst_gap;
  const uint64_t block = kind == TwinSpace::L1 ? 32u : 512u;
  auto t = CubeTensor(dst, kind, pos, repeat == 0 ? 0 : ((repeat - 1) * (blocks + gap) + blocks) * block / sizeof(T), name,
                      loc);
  InitConstValue(t, InitConstValueParams<T>(static_cast<uint16_t>(repeat), static_cast<uint16_t>(blocks),
                                            static_cast<uint16_t>(gap), fill),
                 loc);
}
}  // namespace AscendC::twin

#define ASC_TWIN_FILL(NAME, SPACE, POS)                                                                           \
  template <typename T, typename V>                                                                               \
  __aicore__ inline void NAME(T* dst, V value, const asc_fill_value_config& config, AscendC::TwinLoc loc = {}) {  \
    AscendC::twin::CApiFill(dst, value, config, AscendC::TwinSpace::SPACE, AscendC::TPosition::POS, #NAME, loc);  \
  }                                                                                                               \
  template <typename T, typename V>                                                                               \
  __aicore__ inline void NAME##_sync(T* dst, V value, const asc_fill_value_config& config,                        \
                                     AscendC::TwinLoc loc = {}) {                                                 \
    NAME(dst, value, config, loc);                                                                                \
    AscendC::twin::BarrierAll();                                                                                  \
  }
ASC_TWIN_FILL(asc_fill_l1, L1, A1)
ASC_TWIN_FILL(asc_fill_l0a, L0A, A2)
ASC_TWIN_FILL(asc_fill_l0b, L0B, B2)
#undef ASC_TWIN_FILL

// ---------------------------------------------------------------- L1 -> L0A / L0B (MTE1)
// repeat 512-byte fractals from fractal start_index, src_stride fractals apart, dst_gap fractals
// skipped between destination fractals (LoadData2DParams without a transpose).
#define ASC_TWIN_LOAD_2D(NAME, KIND, POS)                                                                          \
  template <typename T>                                                                                           \
  __aicore__ inline void NAME(T* dst, __cbuf__ T* src, uint16_t start_index, uint8_t repeat, uint16_t src_stride, \
                              uint16_t dst_gap, AscendC::TwinLoc loc = {}) {                                     \
    constexpr uint32_t frac = AscendC::twin::kFractal<T>;                                                       \
    auto l1 = AscendC::twin::CubeTensor(src, AscendC::TwinSpace::L1, AscendC::TPosition::A1,                    \
                                        AscendC::twin::LoadSourceFractals(start_index, repeat, src_stride, frac), \
                                        #NAME " source", loc);                                                     \
    auto l0 = AscendC::twin::CubeTensor(dst, AscendC::TwinSpace::KIND, AscendC::TPosition::POS,                 \
                                        AscendC::twin::LoadSourceFractals(0, repeat, 1u + dst_gap, frac),         \
                                        #NAME " destination", loc);                                                \
    AscendC::LoadData(l0, l1, AscendC::LoadData2DParams(start_index, repeat, src_stride, 0, dst_gap, false, 0), loc); \
  }                                                                                                               \
  template <typename T>                                                                                           \
  __aicore__ inline void NAME##_sync(T* dst, __cbuf__ T* src, uint16_t start_index, uint8_t repeat,              \
                                     uint16_t src_stride, uint16_t dst_gap, AscendC::TwinLoc loc = {}) {         \
    NAME(dst, src, start_index, repeat, src_stride, dst_gap, loc);                                               \
    AscendC::twin::BarrierAll();                                                                                  \
  }
ASC_TWIN_LOAD_2D(asc_copy_l12l0a, L0A, A2)
ASC_TWIN_LOAD_2D(asc_copy_l12l0b, L0B, B2)
#undef ASC_TWIN_LOAD_2D

// The transposing loads (LoadDataWithTranspose): index_id / src_stride count squares (one 16 x 16
// fractal for 16-bit types, two fractals for 8- and 32-bit ones), dst_gap the fractals between
// iterations, dst_frac_gap those between an iteration's two output fractals.
#define ASC_TWIN_LOAD_TRANS(NAME, KIND, POS)                                                                      \
  template <typename T>                                                                                           \
  __aicore__ inline void NAME(T* dst, __cbuf__ T* src, uint16_t index_id, uint8_t repeat, uint16_t src_stride,   \
                              uint16_t dst_gap, bool addr_decrement, uint16_t dst_frac_gap,                      \
                              AscendC::TwinLoc loc = {}) {                                                        \
    constexpr uint32_t frac = AscendC::twin::kFractal<T>, fracs = sizeof(T) == 2 ? 1 : 2;                       \
    auto l1 = AscendC::twin::CubeTensor(src, AscendC::TwinSpace::L1, AscendC::TPosition::A1,                    \
                                        addr_decrement ? uint64_t{index_id + 1u} * fracs * frac                  \
                                                       : AscendC::twin::LoadSourceFractals(index_id, repeat,     \
                                                                                           src_stride, fracs * frac), \
                                        #NAME " source", loc);                                                     \
    const uint64_t last = repeat == 0 ? 0 : uint64_t{repeat - 1u} * (1u + dst_gap);                              \
    auto l0 = AscendC::twin::CubeTensor(dst, AscendC::TwinSpace::KIND, AscendC::TPosition::POS,                 \
                                        repeat == 0 ? 0 : (last + (fracs == 2 ? 2u + dst_frac_gap : 1u)) * frac,   \
                                        #NAME " destination", loc);                                                \
    AscendC::LoadDataWithTranspose(                                                                               \
        l0, l1, AscendC::LoadData2dTransposeParams(index_id, repeat, src_stride, dst_gap, dst_frac_gap,          \
                                                   static_cast<uint8_t>(addr_decrement)),                        \
        loc);                                                                                                     \
  }                                                                                                               \
  template <typename T>                                                                                           \
  __aicore__ inline void NAME##_sync(T* dst, __cbuf__ T* src, uint16_t index_id, uint8_t repeat,                 \
                                     uint16_t src_stride, uint16_t dst_gap, bool addr_decrement,                 \
                                     uint16_t dst_frac_gap, AscendC::TwinLoc loc = {}) {                          \
    NAME(dst, src, index_id, repeat, src_stride, dst_gap, addr_decrement, dst_frac_gap, loc);                    \
    AscendC::twin::BarrierAll();                                                                                  \
  }
ASC_TWIN_LOAD_TRANS(asc_copy_l12l0a_trans, L0A, A2)
ASC_TWIN_LOAD_TRANS(asc_copy_l12l0b_trans, L0B, B2)
#undef ASC_TWIN_LOAD_TRANS

// ---------------------------------------------------------------- L1 -> L0A img2col (MTE1)
// The feature-map registers a 3D asc_copy_l12l0a reads (set on PIPE_S, in effect until set again):
// asc_set_l13d_fmatrix (width, height, pads), asc_set_l13d_padding (the pad value) and
// asc_set_l13d_size (the L1 boundary of the source). The load itself is twin/load3d.h's img2col.
union asc_l13d_fmatrix_config {
  uint64_t config = 0;
  struct {
    uint16_t l1_width;
    uint16_t l1_height;
    uint8_t padding_left_size;
    uint8_t padding_right_size;
    uint8_t padding_top_size;
    uint8_t padding_bottom_size;
  };
};
__aicore__ inline void asc_set_l13d_fmatrix(asc_l13d_fmatrix_config& config) {
  AscendC::twin::CurrentCore().l13dFmatrix = config.config;
}
__aicore__ inline void asc_set_l13d_fmatrix(uint16_t fmatrix_w, uint16_t fmatrix_h, uint8_t pad_left, uint8_t pad_right,
                                            uint8_t pad_top, uint8_t pad_bottom) {
  AscendC::twin::CurrentCore().l13dFmatrix = uint64_t{fmatrix_w} | uint64_t{fmatrix_h} << 16 |
                                             uint64_t{pad_left} << 32 | uint64_t{pad_right} << 40 |
                                             uint64_t{pad_top} << 48 | uint64_t{pad_bottom} << 56;
}
__aicore__ inline void asc_set_l13d_padding(uint64_t config) { AscendC::twin::CurrentCore().l13dPadding = config; }
__aicore__ inline void asc_set_l13d_padding(half config) {
  uint16_t bits;
  std::memcpy(&bits, &config, sizeof bits);
  asc_set_l13d_padding(uint64_t{bits});
}
__aicore__ inline void asc_set_l13d_padding(int16_t config) { asc_set_l13d_padding(uint64_t{static_cast<uint16_t>(config)}); }
__aicore__ inline void asc_set_l13d_padding(uint16_t config) { asc_set_l13d_padding(uint64_t{config}); }
__aicore__ inline void asc_set_l13d_size(uint64_t value, AscendC::TwinLoc loc = {}) {
  if (value != 0 && value < 1024) AscendC::TwinFailAt(loc, "asc_set_l13d_size: a boundary other than 0 is at least 1024 bytes");
  AscendC::twin::CurrentCore().l13dSize = value;
}

// The repeat registers of the 3D loads (asc_set_l13d_rpt, PIPE_S): rpt_stride in bits 0-15,
// rpt_time in 16-23, rpt_mode in 24-31 (SetLoadDataRepeat's LoadDataRepeatParam); default one iteration.
union asc_load3d_v2_config {
  uint64_t config = uint64_t{1} << 16;
  struct {
    uint16_t rpt_stride;
    uint8_t rpt_time;
    uint8_t rpt_mode;
  };
};
__aicore__ inline void asc_set_l13d_rpt(asc_load3d_v2_config& config) {
  AscendC::SetLoadDataRepeat(AscendC::LoadDataRepeatParam(config.rpt_stride, config.rpt_time, config.rpt_mode));
}

namespace AscendC::twin {
// The 3D asc_copy_l12l0a / asc_copy_l12l0b: the feature map at src ([C1][H][W][C0], channel_size
// channels, its size and pads from the registers) -> the k_extension x m_extension block of its
// img2col matrix from (k_start_pt, m_start_pt), into L0A or L0B (twin/load3d.h's layouts).
template <typename T>
inline void CApiImg2Col(T* dst, T* src, TwinSpace space, TPosition pos, uint16_t k_extension, uint16_t m_extension,
                        uint16_t k_start_pt, uint16_t m_start_pt, uint8_t stride_w, uint8_t stride_h, uint8_t filter_w,
                        uint8_t filter_h, uint8_t dilation_filter_w, uint8_t dilation_filter_h, bool filter_size_w,
                        bool filter_size_h, bool transpose, bool f_matrix_ctrl, uint16_t channel_size, const char* what,
                        const TwinLoc& loc) {
  const Core& core = CurrentCore();
  const uint64_t f = core.l13dFmatrix;
  const uint16_t w = static_cast<uint16_t>(f), h = static_cast<uint16_t>(f >> 16);
  char msg[160];
  if (w == 0 || h == 0) {
    std::snprintf(msg, sizeof msg, "%s: no feature map set (asc_set_l13d_fmatrix)", what);
    TwinFailAt(loc, msg);
  }
  T pad;
  std::memcpy(&pad, &core.l13dPadding, sizeof pad);  // the register's low bytes are the value's bits
  constexpr uint32_t c0 = TwinC0<T>();
  const uint64_t mapBytes = uint64_t{channel_size} * h * w * sizeof(T);
  auto l1 = CubeTensor(src, TwinSpace::L1, space == TwinSpace::L0A ? TPosition::A1 : TPosition::B1,
                       mapBytes / sizeof(T), what, loc);
  if (core.l13dSize != 0) {
    const uint64_t end = static_cast<uint64_t>(reinterpret_cast<const uint8_t*>(src) -
                                               CoreSpace(TwinSpace::L1).mem.get()) + mapBytes;
    if (end > core.l13dSize) {
      std::snprintf(msg, sizeof msg, "%s: the feature map passes the asc_set_l13d_size boundary (the hardware would "
                    "wrap to the start of L1; not modelled)", what);
      TwinFailAt(loc, msg);
    }
  }
  const uint64_t m1 = (m_extension + 15u) / 16u, k1 = (k_extension + c0 - 1u) / c0;
  auto l0 = CubeTensor(dst, space, pos, m1 * k1 * 16u * c0 * core.load3dRepeat.times, what, loc);
  Img2Col<T> q{h, w, channel_size, k_extension, m_extension, k_start_pt, m_start_pt,
               static_cast<uint8_t>(f >> 32), static_cast<uint8_t>(f >> 40), static_cast<uint8_t>(f >> 48),
               static_cast<uint8_t>(f >> 56), stride_w, stride_h, filter_w + (filter_size_w ? 256u : 0u),
               filter_h + (filter_size_h ? 256u : 0u), dilation_filter_w, dilation_filter_h, transpose, f_matrix_ctrl,
               pad};
  Img2ColToL0(l0, l1, q, core.load3dRepeat, what, loc);
}
}  // namespace AscendC::twin

#define ASC_TWIN_LOAD_3D(NAME, QUAL, SPACE, POS)                                                                  \
  template <typename T>                                                                                          \
  __aicore__ inline void NAME(QUAL T* dst, __cbuf__ T* src, uint16_t k_extension, uint16_t m_extension,           \
                              uint16_t k_start_pt, uint16_t m_start_pt, uint8_t stride_w, uint8_t stride_h,       \
                              uint8_t filter_w, uint8_t filter_h, uint8_t dilation_filter_w,                      \
                              uint8_t dilation_filter_h, bool filter_size_w, bool filter_size_h, bool transpose, \
                              bool f_matrix_ctrl, uint16_t channel_size, AscendC::TwinLoc loc = {}) {             \
    AscendC::twin::CApiImg2Col(dst, src, AscendC::TwinSpace::SPACE, AscendC::TPosition::POS, k_extension,         \
                               m_extension, k_start_pt, m_start_pt, stride_w, stride_h, filter_w, filter_h,       \
                               dilation_filter_w, dilation_filter_h, filter_size_w, filter_size_h, transpose,     \
                               f_matrix_ctrl, channel_size, #NAME " (3D)", loc);                                  \
  }                                                                                                              \
  template <typename T>                                                                                          \
  __aicore__ inline void NAME##_sync(QUAL T* dst, __cbuf__ T* src, uint16_t k_extension, uint16_t m_extension,    \
                                     uint16_t k_start_pt, uint16_t m_start_pt, uint8_t stride_w,                  \
                                     uint8_t stride_h, uint8_t filter_w, uint8_t filter_h,                        \
                                     uint8_t dilation_filter_w, uint8_t dilation_filter_h, bool filter_size_w,    \
                                     bool filter_size_h, bool transpose, bool f_matrix_ctrl,                      \
                                     uint16_t channel_size, AscendC::TwinLoc loc = {}) {                          \
    NAME(dst, src, k_extension, m_extension, k_start_pt, m_start_pt, stride_w, stride_h, filter_w, filter_h,      \
         dilation_filter_w, dilation_filter_h, filter_size_w, filter_size_h, transpose, f_matrix_ctrl,            \
         channel_size, loc);                                                                                     \
    AscendC::twin::BarrierAll();                                                                                 \
  }
ASC_TWIN_LOAD_3D(asc_copy_l12l0a, __ca__, L0A, A2)
ASC_TWIN_LOAD_3D(asc_copy_l12l0b, __cb__, L0B, B2)
#undef ASC_TWIN_LOAD_3D

// ---------------------------------------------------------------- L1 -> bias table (MTE1)
// copy_cbuf_to_bt's bursts: n_burst of len_burst 64-byte units of the destination, source_gap 32-byte
// blocks and dst_gap 64-byte units between them; conv_control widens a half source to float (the
// table holds float or int32_t words).
template <typename S>
__aicore__ inline void asc_copy_l12bt(uint64_t dst, __cbuf__ S* src, uint16_t conv_control, uint16_t n_burst,
                                      uint16_t len_burst, uint16_t source_gap, uint16_t dst_gap,
                                      AscendC::TwinLoc loc = {}) {
  static_assert(std::is_same_v<S, half> || std::is_same_v<S, float> || std::is_same_v<S, int32_t>,
                "asc_copy_l12bt copies half (widened), float or int32_t");
  using D = std::conditional_t<std::is_same_v<S, int32_t>, int32_t, float>;
  if (std::is_same_v<S, half> != (conv_control != 0))
    AscendC::TwinFailAt(loc, "asc_copy_l12bt: conv_control widens half to float; set it for a half source only");
  if (dst == 0) AscendC::TwinFailAt(loc, "asc_copy_l12bt: the destination is the address of a __biasbuf__ array");
  const uint64_t len = uint64_t{len_burst} * 64u, dstSpan = n_burst == 0 ? 0 : (n_burst - 1u) * (len + dst_gap * 64u) + len;
  const uint64_t srcSpan = n_burst == 0 ? 0 : (n_burst - 1u) * (len / sizeof(D) * sizeof(S) + source_gap * 32u) +
                                                  len / sizeof(D) * sizeof(S);
  auto bt = AscendC::twin::CubeTensor(reinterpret_cast<D*>(dst), AscendC::TwinSpace::BT, AscendC::TPosition::C2,
                                      dstSpan / sizeof(D), "asc_copy_l12bt destination", loc);
  auto l1 = AscendC::twin::CubeTensor(src, AscendC::TwinSpace::L1, AscendC::TPosition::C1, srcSpan / sizeof(S),
                                      "asc_copy_l12bt source", loc);
  AscendC::twin::CopyToBiasTable(bt, l1, n_burst, len, uint64_t{source_gap} * 32u, uint64_t{dst_gap} * 64u, loc);
  AscendC::twin::CurrentCore().capiBiasTable = dst;
}
template <typename S>
__aicore__ inline void asc_copy_l12bt_sync(uint64_t dst, __cbuf__ S* src, uint16_t conv_control, uint16_t n_burst,
                                           uint16_t len_burst, uint16_t source_gap, uint16_t dst_gap,
                                           AscendC::TwinLoc loc = {}) {
  asc_copy_l12bt(dst, src, conv_control, n_burst, len_burst, source_gap, dst_gap, loc);
  AscendC::twin::BarrierAll();
}

// ---------------------------------------------------------------- asc_mmad (M)
// C (L0C) = A (L0A, m x k) * B (L0B, k x n) when c_matrix_init_val, C = bias + A * B (every row from
// the bias table) when c_matrix_source, else C += A * B.
template <typename C, typename T>
__aicore__ inline void asc_mmad(__cc__ C* c_matrix, __ca__ T* a_matrix, __cb__ T* b_matrix, uint16_t left_height,
                                uint16_t n_dim, uint16_t right_width, uint8_t unit_flag, bool k_direction_align,
                                bool c_matrix_source, bool c_matrix_init_val, AscendC::TwinLoc loc = {}) {
  if (unit_flag != 0) AscendC::TwinFailAt(loc, "asc_mmad: unit_flag is not modelled by the twin (pass 0)");
  const bool fromBias = c_matrix_source && !c_matrix_init_val;  // an initial value of 0 wins over the source
  const uint64_t table = AscendC::twin::CurrentCore().capiBiasTable;
  if (fromBias && table == 0)
    AscendC::TwinFailAt(loc, "asc_mmad: c_matrix_source starts C from the bias table, but no asc_copy_l12bt filled it");
  constexpr uint32_t c0 = AscendC::TwinC0<T>();
  const uint64_t m1 = (left_height + 15u) / 16u, k1 = (n_dim + c0 - 1u) / c0, n1 = (right_width + 15u) / 16u;
  auto a = AscendC::twin::CubeTensor(a_matrix, AscendC::TwinSpace::L0A, AscendC::TPosition::A2, m1 * k1 * 16u * c0,
                                     "asc_mmad a_matrix", loc);
  auto b = AscendC::twin::CubeTensor(b_matrix, AscendC::TwinSpace::L0B, AscendC::TPosition::B2, k1 * n1 * 16u * c0,
                                     "asc_mmad b_matrix", loc);
  auto c = AscendC::twin::CubeTensor(c_matrix, AscendC::TwinSpace::L0C, AscendC::TPosition::CO1, m1 * n1 * 256u,
                                     "asc_mmad c_matrix", loc);
  AscendC::MmadParams p(left_height, right_width, n_dim, unit_flag, fromBias, c_matrix_init_val && !fromBias);
  p.kDirectionAlign = k_direction_align;
  if (!fromBias) return AscendC::Mmad(c, a, b, p, loc);
  auto bias = AscendC::twin::CubeTensor(reinterpret_cast<C*>(table), AscendC::TwinSpace::BT, AscendC::TPosition::C2,
                                        n1 * 16u, "asc_mmad bias (the bias table)", loc);
  AscendC::Mmad(c, a, b, bias, p, loc);
}
template <typename C, typename T>
__aicore__ inline void asc_mmad_sync(__cc__ C* c_matrix, __ca__ T* a_matrix, __cb__ T* b_matrix, uint16_t left_height,
                                     uint16_t n_dim, uint16_t right_width, uint8_t unit_flag, bool k_direction_align,
                                     bool c_matrix_source, bool c_matrix_init_val, AscendC::TwinLoc loc = {}) {
  asc_mmad(c_matrix, a_matrix, b_matrix, left_height, n_dim, right_width, unit_flag, k_direction_align,
           c_matrix_source, c_matrix_init_val, loc);
  AscendC::twin::BarrierAll();
}

// ---------------------------------------------------------------- L0C -> GM (FIX)
// The registers asc_copy_l0c2gm reads: ND matrices of an NZ -> ND copy (src_nd_stride in 1024-byte
// L0C fractals, dst_nd_stride in elements), and the scalar quantization word (a float's bits).
__aicore__ inline void asc_set_l0c_copy_params(uint16_t nd_num, uint16_t src_nd_stride, uint16_t dst_nd_stride) {
  AscendC::twin::Core& c = AscendC::twin::CurrentCore();
  c.fixNdNum = nd_num;
  c.fixSrcNdStride = src_nd_stride;
  c.fixDstNdStride = dst_nd_stride;
}
__aicore__ inline void asc_set_l0c_copy_prequant(uint64_t config) { AscendC::twin::CurrentCore().fixQuantScalar = config; }

// The per-channel quantization scales (one uint64_t word per output column, a float's bits in the
// low 32) for the V* modes of asc_copy_l0c2gm: copied L1 -> the fixpipe buffer on FIX (the buffer
// declared as `__fbuf__ uint64_t scales[N]`), then pointed at by asc_set_l0c2gm_quant with that
// array's address. asc_copy_l12fb's burst form counts 32-byte blocks, gaps from one burst's end to
// the next one's start (asc-devkit's page for npu_arch 2201).
__aicore__ inline void asc_copy_l12fb(__fbuf__ void* dst, __cbuf__ void* src, uint16_t burst_num, uint16_t burst_len,
                                      uint16_t src_gap_size, uint16_t dst_gap_size, AscendC::TwinLoc loc = {}) {
  const uint64_t len = uint64_t{burst_len} * 32u;
  const uint64_t dstSpan = burst_num == 0 ? 0 : (burst_num - 1u) * (len + dst_gap_size * 32u) + len;
  const uint64_t srcSpan = burst_num == 0 ? 0 : (burst_num - 1u) * (len + src_gap_size * 32u) + len;
  auto fb = AscendC::twin::CubeTensor(static_cast<uint64_t*>(dst), AscendC::TwinSpace::FB, AscendC::TPosition::C2PIPE2GM,
                                      dstSpan / 8u, "asc_copy_l12fb destination", loc);
  auto l1 = AscendC::twin::CubeTensor(static_cast<uint64_t*>(src), AscendC::TwinSpace::L1, AscendC::TPosition::A1,
                                      srcSpan / 8u, "asc_copy_l12fb source", loc);
  AscendC::twin::CopyToFixpipeBuffer(fb, l1, burst_num, len, len + src_gap_size * 32u, len + dst_gap_size * 32u, loc);
}
__aicore__ inline void asc_copy_l12fb(__fbuf__ void* dst, __cbuf__ void* src, uint32_t size, AscendC::TwinLoc loc = {}) {
  if (size % 32 != 0) AscendC::TwinFailAt(loc, "asc_copy_l12fb: size must be a multiple of 32 bytes");
  asc_copy_l12fb(dst, src, 1, static_cast<uint16_t>(size / 32u), 0, 0, loc);
}
__aicore__ inline void asc_copy_l12fb_sync(__fbuf__ void* dst, __cbuf__ void* src, uint32_t size, AscendC::TwinLoc loc = {}) {
  asc_copy_l12fb(dst, src, size, loc);
  AscendC::twin::BarrierAll();
}
__aicore__ inline void asc_set_l0c2gm_quant(uint64_t quant, AscendC::TwinLoc loc = {}) {
  uint64_t* table = reinterpret_cast<uint64_t*>(quant);
  auto fb = AscendC::twin::CubeTensor(table, AscendC::TwinSpace::FB, AscendC::TPosition::C2PIPE2GM, 1,
                                      "asc_set_l0c2gm_quant", loc);
  AscendC::SetFixPipeConfig(fb, false, loc);
}

namespace AscendC::twin {
// The FixpipeParamsV220 an asc_copy_l0c2gm / asc_copy_l0c2l1 call and the Fixpipe registers describe,
// and the L0C it reads.
template <typename D, typename C>
inline FixpipeParamsV220 CApiFixpipe(C* src, uint16_t n_size, uint16_t m_size, uint32_t dst_stride_dst_d,
                                     uint16_t src_stride, uint8_t unit_flag_mode, uint64_t quant_pre, uint8_t relu_pre,
                                     bool channel_split, bool nz2nd_en, LocalTensor<C>& l0c, const char* name,
                                     const TwinLoc& loc) {
  if (unit_flag_mode != 0) {
    char msg[120];
    std::snprintf(msg, sizeof msg, "%s: unit_flag_mode is not modelled by the twin (pass 0)", name);
    TwinFailAt(loc, msg);
  }
  const Core& core = CurrentCore();
  FixpipeParamsV220 p;
  p.nSize = n_size;
  p.mSize = m_size;
  p.srcStride = src_stride;
  // ND rows are dst_stride elements; NZ columns start dst_stride elements apart (the class API counts 32-byte blocks).
  p.dstStride = nz2nd_en ? dst_stride_dst_d : static_cast<uint32_t>(uint64_t{dst_stride_dst_d} * sizeof(D) / 32u);
  p.quantPre = static_cast<QuantMode_t>(quant_pre);
  p.deqScalar = core.fixQuantScalar;
  p.reluEn = relu_pre != 0;
  p.isChannelSplit = channel_split;
  p.ndNum = nz2nd_en ? core.fixNdNum : 1;
  p.srcNdStride = nz2nd_en ? core.fixSrcNdStride : 0;
  p.dstNdStride = nz2nd_en ? core.fixDstNdStride : 0;
  const uint64_t n1 = (n_size + 15u) / 16u;
  l0c = CubeTensor(src, TwinSpace::L0C, TPosition::CO1,
                   uint64_t{p.ndNum - 1u} * p.srcNdStride * (1024 / sizeof(C)) + n1 * src_stride * 16u, name, loc);
  return p;
}
}  // namespace AscendC::twin

// n_size x m_size of L0C (src_stride 16-element rows between its 16-column groups) to GM: ND with
// dst_stride elements per row when nz2nd_en, else NZ with dst_stride elements between 16-column groups.
template <typename D, typename C>
__aicore__ inline void asc_copy_l0c2gm(__gm__ D* dst, __cc__ C* src, uint16_t n_size, uint16_t m_size,
                                       uint32_t dst_stride_dst_d, uint16_t src_stride, uint8_t unit_flag_mode,
                                       uint64_t quant_pre, uint8_t relu_pre, bool channel_split, bool nz2nd_en,
                                       AscendC::TwinLoc loc = {}) {
  AscendC::LocalTensor<C> l0c;
  const AscendC::FixpipeParamsV220 p = AscendC::twin::CApiFixpipe<D>(
      src, n_size, m_size, dst_stride_dst_d, src_stride, unit_flag_mode, quant_pre, relu_pre, channel_split, nz2nd_en,
      l0c, "asc_copy_l0c2gm", loc);
  AscendC::GlobalTensor<D> gm;
  gm.SetGlobalBuffer(dst);
  if (nz2nd_en) {
    AscendC::Fixpipe<D, C, AscendC::CFG_ROW_MAJOR>(gm, l0c, p, loc);
  } else {
    AscendC::Fixpipe<D, C, AscendC::CFG_NZ>(gm, l0c, p, loc);
  }
}
// The same into L1 (NZ, or ND when nz2nd_en), e.g. to feed the next asc_mmad.
template <typename D, typename C>
__aicore__ inline void asc_copy_l0c2l1(__cbuf__ D* dst, __cc__ C* src, uint16_t n_size, uint16_t m_size,
                                       uint32_t dst_stride_dst_d, uint16_t src_stride, uint8_t unit_flag_mode,
                                       uint64_t quant_pre, uint8_t relu_pre, bool channel_split, bool nz2nd_en,
                                       AscendC::TwinLoc loc = {}) {
  AscendC::LocalTensor<C> l0c;
  const AscendC::FixpipeParamsV220 p = AscendC::twin::CApiFixpipe<D>(
      src, n_size, m_size, dst_stride_dst_d, src_stride, unit_flag_mode, quant_pre, relu_pre, channel_split, nz2nd_en,
      l0c, "asc_copy_l0c2l1", loc);
  const uint64_t elems = nz2nd_en ? uint64_t{m_size} * p.dstStride
                                  : uint64_t{(n_size + 15u) / 16u} * p.dstStride * (32u / sizeof(D));
  auto l1 = AscendC::twin::CubeTensor(dst, AscendC::TwinSpace::L1, AscendC::TPosition::A1, elems, "asc_copy_l0c2l1", loc);
  if (nz2nd_en) {
    AscendC::Fixpipe<D, C, AscendC::CFG_ROW_MAJOR>(l1, l0c, p, loc);
  } else {
    AscendC::Fixpipe<D, C, AscendC::CFG_NZ>(l1, l0c, p, loc);
  }
}
template <typename D, typename C>
__aicore__ inline void asc_copy_l0c2l1_sync(__cbuf__ D* dst, __cc__ C* src, uint16_t n_size, uint16_t m_size,
                                            uint32_t dst_stride_dst_d, uint16_t src_stride, uint8_t unit_flag_mode,
                                            uint64_t quant_pre, uint8_t relu_pre, bool channel_split, bool nz2nd_en,
                                            AscendC::TwinLoc loc = {}) {
  asc_copy_l0c2l1(dst, src, n_size, m_size, dst_stride_dst_d, src_stride, unit_flag_mode, quant_pre, relu_pre,
                  channel_split, nz2nd_en, loc);
  AscendC::twin::BarrierAll();
}
template <typename D, typename C>
__aicore__ inline void asc_copy_l0c2gm_sync(__gm__ D* dst, __cc__ C* src, uint16_t n_size, uint16_t m_size,
                                            uint32_t dst_stride_dst_d, uint16_t src_stride, uint8_t unit_flag_mode,
                                            uint64_t quant_pre, uint8_t relu_pre, bool channel_split, bool nz2nd_en,
                                            AscendC::TwinLoc loc = {}) {
  asc_copy_l0c2gm(dst, src, n_size, m_size, dst_stride_dst_d, src_stride, unit_flag_mode, quant_pre, relu_pre,
                  channel_split, nz2nd_en, loc);
  AscendC::twin::BarrierAll();
}
