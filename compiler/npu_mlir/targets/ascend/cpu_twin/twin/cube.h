// Cube-unit subset: GM -> L1 (ND to NZ), L1 -> L0A/L0B (LoadData), Mmad into
// L0C, Fixpipe L0C -> GM. Fractals are 512 bytes: 16 rows x C0 columns with
// C0 = 32 / sizeof(T) (16 for fp16/bf16, 8 for fp32).
//
// Layouts (element (r, c) of the tile held in each buffer):
//   L1 (Nd2Nz)  [c / C0][R16][C0]                     R16 = rows padded to 16
//   L0A (zZ)    fractal (r / 16, c / C0) at index (r/16) * K1 + c/C0, row-major inside
//   L0B         fractal (k / 16, n / C0) at index (k/16) * N1 + n/C0, row-major inside
//   L0C (NZ)    fp32 fractal (n / 16, m / 16) at index (n/16) * M1 + m/16, 16x16 row-major
// Simplification against hardware: L0B keeps B's fractals as k-rows x n-columns
// (the hardware wants them transposed) and Mmad indexes it accordingly; the
// arithmetic, the fractal padding and the capacity limits are those of the hardware.
#pragma once

#include <cstdint>

namespace AscendC {

template <typename T>
constexpr uint32_t TwinC0() { return 32 / sizeof(T); }

struct Nd2NzParams {
  uint16_t ndNum = 1;
  uint16_t nValue = 0;             // rows copied
  uint16_t dValue = 0;             // columns copied
  uint16_t srcNdMatrixStride = 0;
  uint16_t srcDValue = 0;          // source row stride, elements
  uint16_t dstNzC0Stride = 0;      // distance between C0 column groups, in C0 blocks (= padded rows)
  uint16_t dstNzNStride = 1;       // distance between rows, in C0 blocks
  uint16_t dstNzMatrixStride = 0;
};

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& p) {
  constexpr uint32_t c0 = TwinC0<T>();
  uint64_t last = (uint64_t{p.dValue} - 1) / c0 * p.dstNzC0Stride * c0 + (uint64_t{p.nValue} - 1) * p.dstNzNStride * c0 + c0;
  TwinCheckRange(dst, last, "DataCopy Nd2Nz");
  for (uint32_t r = 0; r < p.nValue; ++r)
    for (uint32_t c = 0; c < p.dValue; ++c)
      dst.SetValue((c / c0) * p.dstNzC0Stride * c0 + r * p.dstNzNStride * c0 + c % c0,
                   src.GetValue(uint64_t{r} * p.srcDValue + c));
}

struct InitConstValueParams {
  uint16_t repeatTimes = 1;   // 512-byte blocks to fill
  uint16_t blockNum = 16;
  uint16_t dstGap = 0;
  uint32_t initValue = 0;
};

// Zeroes the fractal padding in L1, which Mmad reads like any other element.
template <typename T>
inline void InitConstValue(const LocalTensor<T>& dst, const InitConstValueParams& p) {
  uint32_t n = uint32_t{p.repeatTimes} * 512u / sizeof(T);
  TwinCheckRange(dst, n, "InitConstValue");
  for (uint32_t i = 0; i < n; ++i) dst.SetValue(i, T(static_cast<float>(p.initValue)));
}

struct LoadData2dParams {
  uint16_t startIndex = 0;  // first fractal of the source
  uint8_t repeatTimes = 1;  // fractals copied
  uint16_t srcStride = 1;   // source fractals between copies
  uint8_t sid = 0;
  uint16_t dstGap = 0;      // destination fractals skipped between copies
  bool ifTranspose = false;
  uint8_t addrMode = 0;
};

// Copies `repeatTimes` fractals; with ifTranspose each 16x16 fractal is transposed on the way,
// which the hardware offers for 16-bit types only.
template <typename T>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2dParams& p) {
  constexpr uint32_t frac = 512 / sizeof(T);
  if (p.ifTranspose && sizeof(T) != 2) TwinFail("LoadData ifTranspose needs a 16-bit type (16x16 fractals)");
  for (uint32_t r = 0; r < p.repeatTimes; ++r) {
    LocalTensor<T> s = src[(uint32_t{p.startIndex} + r * p.srcStride) * frac];
    LocalTensor<T> d = dst[r * (1u + p.dstGap) * frac];
    TwinCheckRange(s, frac, "LoadData source");
    TwinCheckRange(d, frac, "LoadData destination");
    if (!p.ifTranspose) {
      std::memcpy(d.GetPhyAddr(), s.GetPhyAddr(), 512);
      continue;
    }
    for (uint32_t i = 0; i < 16; ++i)
      for (uint32_t j = 0; j < 16; ++j) d.SetValue(i * 16 + j, s.GetValue(j * 16 + i));
  }
}

struct MmadParams {
  uint16_t m = 0;
  uint16_t n = 0;
  uint16_t k = 0;
  bool isBias = false;
  int32_t fmOffset = 0;
  bool enSsparse = false;
  bool enWinogradA = false;
  bool enWinogradB = false;
  uint8_t unitFlag = 0;
  bool kDirectionAlign = false;
  bool cmatrixSource = false;
  bool cmatrixInitVal = true;  // true: C = A*B, false: C += A*B
};

// The cube multiplies whole fractals: k runs to the 16-padded depth, so the
// padding of A and B must be zero (InitConstValue) or it pollutes the result.
template <typename C, typename T>
inline void Mmad(const LocalTensor<C>& c, const LocalTensor<T>& a, const LocalTensor<T>& b, const MmadParams& p) {
  constexpr uint32_t c0 = TwinC0<T>();
  const uint32_t m1 = (p.m + 15u) / 16u, n1c = (p.n + c0 - 1u) / c0, k16 = (p.k + 15u) / 16u * 16u;
  const uint32_t k1 = k16 / c0;
  TwinCheckRange(a, uint64_t{m1} * 16u * k16, "Mmad A (L0A)");
  TwinCheckRange(b, uint64_t{k16} * n1c * c0, "Mmad B (L0B)");
  TwinCheckRange(c, uint64_t{(p.n + 15u) / 16u} * m1 * 256u, "Mmad C (L0C)");
  for (uint32_t m = 0; m < p.m; ++m) {
    for (uint32_t n = 0; n < p.n; ++n) {
      float acc = 0.0f;
      for (uint32_t k = 0; k < k16; ++k) {
        float av = static_cast<float>(a.GetValue(((m / 16) * k1 + k / c0) * 16 * c0 + (m % 16) * c0 + k % c0));
        float bv = static_cast<float>(b.GetValue(((k / 16) * n1c + n / c0) * 16 * c0 + (k % 16) * c0 + n % c0));
        acc += av * bv;
      }
      uint32_t ci = ((n / 16) * m1 + m / 16) * 256 + (m % 16) * 16 + n % 16;
      float prev = p.cmatrixInitVal ? 0.0f : static_cast<float>(c.GetValue(ci));
      c.SetValue(ci, C(prev + acc));
    }
  }
}

enum class QuantMode_t { NoQuant, F322F16, F322BF16 };

struct FixpipeParamsV220 {
  uint16_t nSize = 0;
  uint16_t mSize = 0;
  uint16_t srcStride = 0;  // rows of an L0C fractal column (m padded to 16)
  uint32_t dstStride = 0;  // GM row stride, elements
  QuantMode_t quantPre = QuantMode_t::NoQuant;
  bool reluEn = false;
  uint8_t unitFlag = 0;
};

// L0C (NZ, fp32) -> GM (ND), converting to the output dtype on the way.
template <typename D, typename C>
inline void Fixpipe(const GlobalTensor<D>& dst, const LocalTensor<C>& src, const FixpipeParamsV220& p) {
  TwinCheckRange(src, uint64_t{(p.nSize + 15u) / 16u} * p.srcStride * 16u, "Fixpipe source (L0C)");
  GlobalTensor<D> out = dst;
  for (uint32_t m = 0; m < p.mSize; ++m) {
    for (uint32_t n = 0; n < p.nSize; ++n) {
      float v = static_cast<float>(src.GetValue((n / 16) * p.srcStride * 16 + m * 16 + n % 16));
      if (p.reluEn && v < 0.0f) v = 0.0f;
      out.SetValue(uint64_t{m} * p.dstStride + n, D(v));
    }
  }
}

}  // namespace AscendC
