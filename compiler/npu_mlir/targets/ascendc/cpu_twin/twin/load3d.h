// Load3Dv2 (img2col): L1 feature map -> L0A or L0B fractals of convolution windows, on MTE1
// (AscendC's LoadData with LoadData3DParamsV2, and the C API's 3D asc_copy_l12l0a / asc_copy_l12l0b,
// per their documentation).
//
// The feature map sits in L1 as [C1][H][W][C0] (NC1HWC0 without N; C0 = 32 / sizeof(T)). The
// img2col matrix has one row per output position, m = ho * Wo + wo (the window slides along W
// first), and one column per (c1, kh, kw, c0), k = ((c1 * Kh + kh) * Kw + kw) * C0 + c0 - the
// FRACTAL_Z order of a convolution weight, so Mmad against the weight's L0B computes the
// convolution. A map of fewer channels than C0 that divide it (4 or 8 halves, 4 floats: a first
// layer's padded RGB) sits as [H][W][channelSize], its columns (kh, kw, c) with c innermost.
// Window element (kh, kw) of output (ho, wo) reads row ho * strideH - padTop + kh * dilationH,
// column wo * strideW - padLeft + kw * dilationW; outside the map it is padValue. The instruction
// writes the mExtension x kExtension block starting at (mStartPt, kStartPt) of that matrix, whole
// fractals (rows past the last output position and columns past the last window element are
// padValue too), in the destination's layout (twin/cube.h):
//   L0A           A[m][k] = block[m][k]: one fractal row per 16 output positions
//   L0A transpose A[m][k] = block[k][m] (16-bit types): the window columns become A's rows
//   L0B           B[k][n] = block[n][k]: each output position a column of B (img2colv2_cbuf_to_cb)
//   L0B transpose B[k][n] = block[k][n] (16-bit types): positions along K, as a weight
//                 gradient's right matrix needs them
// SetLoadDataRepeat (the C API's asc_set_l13d_rpt) repeats the instruction repeatTime times, each
// iteration repeatStride x 16 rows further (repeatMode 0, along the height of the matrix) or
// repeatStride x C0 columns further (mode 1, along its width), into the fractals right after the
// previous iteration's.
//
// Not modelled (refused at the call): channel sizes past C0 that are not a multiple of it (N*16+4
// ...), the transpose of 8- and 32-bit types, and fMatrixCtrl (the right feature map).
#pragma once

#include <cstdint>

namespace AscendC {

constexpr int32_t PAD_SIZE = 4;  // padList: left, right, top, bottom

template <typename T>
struct LoadData3DParamsV2 {
  LoadData3DParamsV2() = default;
  LoadData3DParamsV2(const uint8_t padListIn[PAD_SIZE], uint16_t l1HIn, uint16_t l1WIn, uint16_t channelSizeIn,
                     uint16_t kExtensionIn, uint16_t mExtensionIn, uint16_t kStartPtIn, uint16_t mStartPtIn,
                     uint8_t strideWIn, uint8_t strideHIn, uint8_t filterWIn, uint8_t filterHIn,
                     uint8_t dilationFilterWIn, uint8_t dilationFilterHIn, bool enTransposeIn, bool enSmallKIn,
                     T padValueIn)
      : l1H(l1HIn), l1W(l1WIn), channelSize(channelSizeIn), kExtension(kExtensionIn), mExtension(mExtensionIn),
        kStartPt(kStartPtIn), mStartPt(mStartPtIn), strideW(strideWIn), strideH(strideHIn), filterW(filterWIn),
        filterH(filterHIn), dilationFilterW(dilationFilterWIn), dilationFilterH(dilationFilterHIn),
        enTranspose(enTransposeIn), enSmallK(enSmallKIn), padValue(padValueIn) {
    for (int32_t i = 0; i < PAD_SIZE; ++i) padList[i] = padListIn[i];
  }
  LoadData3DParamsV2(const uint8_t padListIn[PAD_SIZE], uint16_t l1HIn, uint16_t l1WIn, uint16_t channelSizeIn,
                     uint16_t kExtensionIn, uint16_t mExtensionIn, uint16_t kStartPtIn, uint16_t mStartPtIn,
                     uint8_t strideWIn, uint8_t strideHIn, uint8_t filterWIn, uint8_t filterHIn,
                     uint8_t dilationFilterWIn, uint8_t dilationFilterHIn, bool enTransposeIn, bool enSmallKIn,
                     T padValueIn, bool filterSizeWIn, bool filterSizeHIn, bool fMatrixCtrlIn)
      : LoadData3DParamsV2(padListIn, l1HIn, l1WIn, channelSizeIn, kExtensionIn, mExtensionIn, kStartPtIn, mStartPtIn,
                           strideWIn, strideHIn, filterWIn, filterHIn, dilationFilterWIn, dilationFilterHIn,
                           enTransposeIn, enSmallKIn, padValueIn) {
    filterSizeW = filterSizeWIn;
    filterSizeH = filterSizeHIn;
    fMatrixCtrl = fMatrixCtrlIn;
  }
  uint8_t padList[PAD_SIZE] = {0, 0, 0, 0};
  uint16_t l1H = 0;           // feature map height in L1
  uint16_t l1W = 0;           // feature map width in L1
  uint16_t channelSize = 0;   // channels of the feature map (C1 * C0)
  uint16_t kExtension = 0;    // columns of the img2col block written
  uint16_t mExtension = 0;    // rows of the img2col block written
  uint16_t kStartPt = 0;      // first column, a multiple of C0
  uint16_t mStartPt = 0;      // first row
  uint8_t strideW = 1;
  uint8_t strideH = 1;
  uint8_t filterW = 1;
  uint8_t filterH = 1;
  uint8_t dilationFilterW = 1;
  uint8_t dilationFilterH = 1;
  bool enTranspose = false;
  bool enSmallK = false;
  T padValue = T(0);
  bool filterSizeW = false;   // filter width + 256
  bool filterSizeH = false;   // filter height + 256
  bool fMatrixCtrl = false;   // take the feature map from the right-matrix registers
};

namespace twin {
// One img2col instruction in the units both APIs share.
template <typename T>
struct Img2Col {
  uint16_t l1H, l1W, channelSize, kExtension, mExtension, kStartPt, mStartPt;
  uint8_t padLeft, padRight, padTop, padBottom;
  uint32_t strideW, strideH, filterW, filterH, dilationW, dilationH;
  bool transpose, fMatrixCtrl;
  T padValue;
};

template <typename T>
inline void Img2ColToL0(const LocalTensor<T>& dst, const LocalTensor<T>& src, const Img2Col<T>& p,
                        const Load3dRepeat& repeat, const char* what, const TwinLoc& loc) {
  TwinCheckSpace(src.GetPosition(), {TPosition::A1, TPosition::B1}, what, loc);
  TwinCheckSpace(dst.GetPosition(), {TPosition::A2, TPosition::B2}, what, loc);
  const bool toB = SpaceOf(dst.GetPosition()) == TwinSpace::L0B;
  constexpr uint32_t c0 = TwinC0<T>();
  char msg[200];
  if (p.fMatrixCtrl) TwinFailAt(loc, "Load3Dv2 from the right feature map (fMatrixCtrl) is not modelled by the twin");
  if (p.transpose && c0 != 16) TwinFailAt(loc, "Load3Dv2 transposes 16-bit types only");
  if (repeat.times == 0) return;
  // Channels move in groups of C0, or all at once when fewer that divide C0.
  const uint32_t group = p.channelSize < c0 ? p.channelSize : c0;
  if (p.channelSize == 0 || p.channelSize % group != 0 || c0 % group != 0 || group < 4) {
    std::snprintf(msg, sizeof msg, "Load3Dv2 channelSize %u: the twin models multiples of C0 = %u, or 4 / 8 / ... "
                  "channels that divide it", unsigned{p.channelSize}, c0);
    TwinFailAt(loc, msg);
  }
  if (p.kStartPt % c0 != 0) {
    std::snprintf(msg, sizeof msg, "Load3Dv2 kStartPt %u is not a multiple of C0 = %u", unsigned{p.kStartPt}, c0);
    TwinFailAt(loc, msg);
  }
  if (p.strideW == 0 || p.strideH == 0 || p.filterW == 0 || p.filterH == 0 || p.dilationW == 0 || p.dilationH == 0)
    TwinFailAt(loc, "Load3Dv2 strides, filter sizes and dilations start at 1");
  const int64_t spanW = int64_t{p.l1W} + p.padLeft + p.padRight - int64_t{p.dilationW} * (p.filterW - 1) - 1;
  const int64_t spanH = int64_t{p.l1H} + p.padTop + p.padBottom - int64_t{p.dilationH} * (p.filterH - 1) - 1;
  if (spanW < 0 || spanH < 0) TwinFailAt(loc, "Load3Dv2: the (dilated) filter is larger than the padded feature map");
  const uint64_t wo = static_cast<uint64_t>(spanW) / p.strideW + 1, ho = static_cast<uint64_t>(spanH) / p.strideH + 1;
  const uint64_t window = uint64_t{p.filterH} * p.filterW * group;  // columns per channel group
  const uint64_t kTotal = window * (p.channelSize / group);
  const uint64_t kStep = repeat.mode == 1 ? uint64_t{repeat.stride} * c0 : 0;
  const uint64_t mStep = repeat.mode == 0 ? uint64_t{repeat.stride} * 16u : 0;
  const uint64_t kLast = p.kStartPt + kStep * (repeat.times - 1u);
  if (kLast + p.kExtension > (kTotal + c0 - 1) / c0 * c0) {
    std::snprintf(msg, sizeof msg, "Load3Dv2 columns %llu..%llu pass the img2col width %llu (channels x filter)",
                  static_cast<unsigned long long>(kLast), static_cast<unsigned long long>(kLast + p.kExtension),
                  static_cast<unsigned long long>(kTotal));
    TwinFailAt(loc, msg);
  }
  const uint64_t m1 = (p.mExtension + 15u) / 16u, k1 = (p.kExtension + c0 - 1u) / c0;
  const uint64_t block = m1 * k1 * 16u * c0;  // elements one iteration writes
  const uint64_t mapElems = uint64_t{p.channelSize} * p.l1H * p.l1W;
  const char* where = toB ? "Load3Dv2 destination (L0B)" : "Load3Dv2 destination (L0A)";
  TwinCheckRangeAt(src, mapElems, "Load3Dv2 source (feature map in L1)", loc);
  TwinCheckRangeAt(dst, block * repeat.times, where, loc);
  CheckLocalAlign(dst.GetPhyAddr(), 512, where, loc);
  CheckLocalAlign(src.GetPhyAddr(), 32, "Load3Dv2 source (L1)", loc);
  Op op(MTE1, loc, what);
  op.Read(src.GetPhyAddr(), mapElems * sizeof(T));
  op.Write(dst.GetPhyAddr(), block * repeat.times * sizeof(T));
  // Where element (m, k) of one iteration's block lands (16 x 16 fractals when transposed).
  auto at = [&](uint64_t m, uint64_t k) -> uint64_t {
    if (p.transpose && toB) return ((m / 16u) * k1 + k / 16u) * 256u + (k % 16u) * 16u + m % 16u;
    if (p.transpose) return ((k / 16u) * m1 + m / 16u) * 256u + (k % 16u) * 16u + m % 16u;
    if (toB) return ((k / c0) * m1 + m / 16u) * 16u * c0 + (m % 16u) * c0 + k % c0;
    return ((m / 16u) * k1 + k / c0) * 16u * c0 + (m % 16u) * c0 + k % c0;
  };
  for (uint64_t it = 0; it < repeat.times; ++it) {
    const uint64_t mStart = p.mStartPt + it * mStep, kStart = p.kStartPt + it * kStep;
    for (uint64_t m = 0; m < m1 * 16u; ++m) {
      const uint64_t row = mStart + m, oh = row / wo, ow = row % wo;
      for (uint64_t k = 0; k < k1 * c0; ++k) {
        const uint64_t col = kStart + k, c1 = col / window, kh = col % window / (uint64_t{p.filterW} * group);
        const uint64_t kw = col / group % p.filterW, cc = col % group;
        const int64_t ih = static_cast<int64_t>(oh * p.strideH + kh * p.dilationH) - p.padTop;
        const int64_t iw = static_cast<int64_t>(ow * p.strideW + kw * p.dilationW) - p.padLeft;
        T v = p.padValue;
        if (oh < ho && col < kTotal && ih >= 0 && ih < p.l1H && iw >= 0 && iw < p.l1W)
          v = src.TwinGet(static_cast<uint32_t>(((c1 * p.l1H + static_cast<uint64_t>(ih)) * p.l1W +
                                                 static_cast<uint64_t>(iw)) * group + cc));
        dst.TwinSet(static_cast<uint32_t>(it * block + at(m, k)), v);
      }
    }
  }
}
}  // namespace twin

struct LoadDataRepeatParam {
  LoadDataRepeatParam() = default;
  LoadDataRepeatParam(uint16_t repeatStrideIn, uint8_t repeatTimeIn, uint8_t repeatModeIn)
      : repeatStride(repeatStrideIn), repeatTime(repeatTimeIn), repeatMode(repeatModeIn) {}
  uint16_t repeatStride = 0;
  uint8_t repeatTime = 1;
  uint8_t repeatMode = 0;
};

// Sets the repeat registers every later Load3Dv2 of this core reads (until set again).
inline void SetLoadDataRepeat(const LoadDataRepeatParam& p, TwinLoc loc = {}) {
  if (p.repeatMode > 1) TwinFailAt(loc, "SetLoadDataRepeat: repeatMode is 0 (height) or 1 (width)");
  twin::CurrentCore().load3dRepeat = twin::Load3dRepeat{p.repeatStride, p.repeatTime, p.repeatMode};
}

// L1 (A1 / B1) -> L0A (A2) or L0B (B2) img2col; the feature map's size and padding travel in the parameters.
template <typename T>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData3DParamsV2<T>& p,
                     TwinLoc loc = {}) {
  twin::Img2Col<T> q{p.l1H, p.l1W, p.channelSize, p.kExtension, p.mExtension, p.kStartPt, p.mStartPt,
                     p.padList[0], p.padList[1], p.padList[2], p.padList[3], p.strideW, p.strideH,
                     p.filterW + (p.filterSizeW ? 256u : 0u), p.filterH + (p.filterSizeH ? 256u : 0u),
                     p.dilationFilterW, p.dilationFilterH, p.enTranspose, p.fMatrixCtrl, p.padValue};
  twin::Img2ColToL0(dst, src, q, twin::CurrentCore().load3dRepeat, "LoadData (Load3Dv2)", loc);
}

}  // namespace AscendC
