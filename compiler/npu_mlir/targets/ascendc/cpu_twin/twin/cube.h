// Cube-unit subset: GM -> L1 (DataCopy Nd2Nz), L1 -> L0A / L0B (LoadData, LoadDataWithTranspose),
// Mmad into L0C, Fixpipe L0C -> GM or L1. A fractal is 512 bytes; C0 = 32 / sizeof(T) elements
// (16 for fp16/bf16, 8 for fp32, 32 for int8: int8 x int8 accumulates exactly in int32 on L0C). The layouts are the hardware's (AscendC Mmad documentation):
//   L1 (Nd2Nz)  NZ: column groups of C0, each holding its rows one after the other:
//               (r, c) at (c / C0) * dstNzC0Stride * C0 + r * dstNzNStride * C0 + c % C0
//   L0A  A[m][k] "zZ": 16 x C0 fractals, row-major between and inside:
//               fractal (m / 16) * K1 + k / C0, element (m % 16) * C0 + k % C0
//   L0B  B[k][n] "nZ": C0 x 16 fractals, row-major between, column-major inside:
//               fractal (k / C0) * N1 + n / 16, element (n % 16) * C0 + k % C0
//   L0C  C[m][n] "NZ": 16 x 16 fractals, column-major between, row-major inside:
//               fractal (n / 16) * M1 + m / 16, element (m % 16) * 16 + n % 16
// with M1 = ceil(m / 16), K1 = ceil(k / C0), N1 = ceil(n / 16). So a B copied into L1 in NZ
// ([k][n] rows) reaches L0B only through a transposing load, and a B stored transposed ([n][k])
// reaches it through a plain one - the reverse of A.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace AscendC {

template <typename T>
constexpr uint32_t TwinC0() { return 32 / sizeof(T); }

inline void TwinCheckSpace(TPosition pos, std::initializer_list<TPosition> allowed, const char* op, const TwinLoc& loc) {
  for (TPosition p : allowed)
    if (SpaceOf(p) == SpaceOf(pos)) return;
  char msg[160];
  std::snprintf(msg, sizeof msg, "%s on a tensor in %s, which this instruction cannot address", op,
                SpaceName(SpaceOf(pos)));
  TwinFailAt(loc, msg);
}

struct Nd2NzParams {
  Nd2NzParams() = default;
  Nd2NzParams(uint16_t ndNumIn, uint16_t nValueIn, uint16_t dValueIn, uint16_t srcNdMatrixStrideIn,
              uint16_t srcDValueIn, uint16_t dstNzC0StrideIn, uint16_t dstNzNStrideIn, uint16_t dstNzMatrixStrideIn)
      : ndNum(ndNumIn), nValue(nValueIn), dValue(dValueIn), srcNdMatrixStride(srcNdMatrixStrideIn),
        srcDValue(srcDValueIn), dstNzC0Stride(dstNzC0StrideIn), dstNzNStride(dstNzNStrideIn),
        dstNzMatrixStride(dstNzMatrixStrideIn) {}
  uint16_t ndNum = 0;              // ND matrices copied
  uint16_t nValue = 0;             // rows of each
  uint16_t dValue = 0;             // columns of each
  uint16_t srcNdMatrixStride = 0;  // elements between the source matrices
  uint16_t srcDValue = 0;          // source row stride, elements
  uint16_t dstNzC0Stride = 0;      // C0 rows between column groups in L1
  uint16_t dstNzNStride = 0;       // C0 rows between rows in L1
  uint16_t dstNzMatrixStride = 0;  // elements between the destination matrices
};

// GM (ND) -> L1 (NZ), on MTE2.
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& p, TwinLoc loc = {}) {
  TwinCheckSpace(dst.GetPosition(), {TPosition::A1}, "DataCopy Nd2Nz", loc);
  constexpr uint32_t c0 = TwinC0<T>();
  twin::Op op(twin::MTE2, loc, "DataCopy Nd2Nz");
  for (uint32_t m = 0; m < p.ndNum; ++m) {
    for (uint32_t r = 0; r < p.nValue; ++r) {
      for (uint32_t c = 0; c < p.dValue; ++c) {
        uint64_t at = uint64_t{m} * p.dstNzMatrixStride + (c / c0) * uint64_t{p.dstNzC0Stride} * c0 +
                      uint64_t{r} * p.dstNzNStride * c0 + c % c0;
        TwinCheckRangeAt(dst, at + 1, "DataCopy Nd2Nz", loc);
        dst.TwinSet(static_cast<uint32_t>(at), src.TwinGet(uint64_t{m} * p.srcNdMatrixStride + uint64_t{r} * p.srcDValue + c));
        op.Write(dst.GetPhyAddr() + at, sizeof(T));
      }
      if (p.dValue > 0)
        op.ReadGm(src.GetPhyAddr() + uint64_t{m} * p.srcNdMatrixStride + uint64_t{r} * p.srcDValue, uint64_t{p.dValue} * sizeof(T));
    }
  }
}

template <typename T>
struct InitConstValueParams {
  InitConstValueParams() = default;
  InitConstValueParams(uint16_t repeatTimesIn, uint16_t blockNumIn, uint16_t dstGapIn, T initValueIn)
      : repeatTimes(repeatTimesIn), blockNum(blockNumIn), dstGap(dstGapIn), initValue(initValueIn) {}
  InitConstValueParams(uint16_t repeatTimesIn, T initValueIn) : repeatTimes(repeatTimesIn), initValue(initValueIn) {}
  uint16_t repeatTimes = 0;  // iterations
  uint16_t blockNum = 0;     // blocks set per iteration: 32 bytes in L1, 512 in L0A / L0B
  uint16_t dstGap = 0;       // blocks skipped between iterations, in the same unit
  T initValue = T(0);
};

// Fills L1 (on MTE2) or L0A / L0B (on MTE1), e.g. the fractal padding Mmad multiplies.
template <typename T, typename U>
inline void InitConstValue(const LocalTensor<T>& dst, const InitConstValueParams<U>& p, TwinLoc loc = {}) {
  TwinCheckSpace(dst.GetPosition(), {TPosition::A1, TPosition::A2, TPosition::B2}, "InitConstValue", loc);
  const bool l1 = SpaceOf(dst.GetPosition()) == TwinSpace::L1;
  twin::CheckLocalAlign(dst.GetPhyAddr(), l1 ? 32 : 512, l1 ? "InitConstValue (L1)" : "InitConstValue (L0A/L0B)", loc);
  twin::Op op(l1 ? twin::MTE2 : twin::MTE1, loc, "InitConstValue");
  const uint32_t perBlock = (l1 ? 32u : 512u) / sizeof(T);
  for (uint32_t r = 0; r < p.repeatTimes; ++r) {
    uint64_t base = uint64_t{r} * (uint64_t{p.blockNum} + p.dstGap) * perBlock;
    uint64_t n = uint64_t{p.blockNum} * perBlock;
    TwinCheckRangeAt(dst, base + n, "InitConstValue", loc);
    for (uint64_t i = 0; i < n; ++i) dst.TwinSet(static_cast<uint32_t>(base + i), static_cast<T>(p.initValue));
    op.Write(dst.GetPhyAddr() + base, n * sizeof(T));
  }
}

using LoadData2dParams = struct LoadData2DParams;
struct LoadData2DParams {
  LoadData2DParams() = default;
  LoadData2DParams(uint16_t startIndexIn, uint8_t repeatTimesIn, uint16_t srcStrideIn, uint8_t sidIn,
                   uint16_t dstGapIn, bool ifTransposeIn, uint8_t addrModeIn)
      : startIndex(startIndexIn), dstGap(dstGapIn), srcStride(srcStrideIn), ifTranspose(ifTransposeIn),
        repeatTimes(repeatTimesIn), sid(sidIn), addrMode(addrModeIn) {}
  uint16_t startIndex = 0;  // first source fractal
  uint16_t dstGap = 0;      // destination fractals skipped between iterations
  uint16_t srcStride = 0;   // source fractals between iterations
  bool ifTranspose = false;
  uint8_t repeatTimes = 0;  // fractals moved (0: nothing)
  uint8_t sid = 0;
  uint8_t addrMode = 0;     // 0: source index increases, 1: decreases
};

// L1 -> L0A / L0B on MTE1, one 512-byte fractal per iteration; ifTranspose transposes each
// 16 x 16 fractal, which this instruction offers for 16-bit types only.
template <typename T>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParams& p, TwinLoc loc = {}) {
  TwinCheckSpace(src.GetPosition(), {TPosition::A1}, "LoadData source", loc);
  TwinCheckSpace(dst.GetPosition(), {TPosition::A2, TPosition::B2}, "LoadData destination", loc);
  constexpr uint32_t frac = 512 / sizeof(T);
  if (p.ifTranspose && sizeof(T) != 2)
    TwinFailAt(loc, "LoadData2DParams::ifTranspose needs a 16-bit type; use LoadDataWithTranspose for 32-bit");
  twin::CheckLocalAlign(dst.GetPhyAddr(), 512, "LoadData destination (L0A/L0B)", loc);
  twin::Op op(twin::MTE1, loc, "LoadData");
  for (uint32_t r = 0; r < p.repeatTimes; ++r) {
    int64_t idx = p.addrMode ? int64_t{p.startIndex} - int64_t{r} * p.srcStride : int64_t{p.startIndex} + int64_t{r} * p.srcStride;
    if (idx < 0) TwinFailAt(loc, "LoadData source fractal index below zero (addrMode decreasing)");
    uint64_t s = static_cast<uint64_t>(idx) * frac, d = uint64_t{r} * (1u + p.dstGap) * frac;
    TwinCheckRangeAt(src, s + frac, "LoadData source", loc);
    TwinCheckRangeAt(dst, d + frac, "LoadData destination", loc);
    op.Read(src.GetPhyAddr() + s, 512);
    op.Write(dst.GetPhyAddr() + d, 512);
    for (uint32_t i = 0; i < frac; ++i) {
      uint32_t from = p.ifTranspose ? (i % 16) * 16 + i / 16 : i;
      dst.TwinSet(static_cast<uint32_t>(d + i), src.TwinGet(static_cast<uint32_t>(s + from)));
    }
  }
}

struct LoadData2dTransposeParams {
  LoadData2dTransposeParams() = default;
  LoadData2dTransposeParams(uint16_t startIndexIn, uint8_t repeatTimesIn, uint16_t srcStrideIn, uint16_t dstGapIn,
                            uint16_t dstfracGapIn, uint8_t addrModeIn)
      : startIndex(startIndexIn), repeatTimes(repeatTimesIn), srcStride(srcStrideIn), dstGap(dstGapIn),
        dstFracGap(dstfracGapIn), addrMode(addrModeIn) {}
  LoadData2dTransposeParams(uint16_t startIndexIn, uint8_t repeatTimesIn, uint16_t srcStrideIn, uint16_t dstGapIn,
                            uint16_t dstfracGapIn)
      : startIndex(startIndexIn), repeatTimes(repeatTimesIn), srcStride(srcStrideIn), dstGap(dstGapIn),
        dstFracGap(dstfracGapIn) {}
  uint16_t startIndex = 0;  // first square, in squares
  uint8_t repeatTimes = 0;
  uint16_t srcStride = 0;   // squares between iterations
  uint16_t dstGap = 0;      // fractals from one iteration's first output fractal's end to the next one's
  uint16_t dstFracGap = 0;  // fractals between the two output fractals of one 32-bit iteration
  uint8_t addrMode = 0;
};

// L1 -> L0A / L0B on MTE1 with a transpose (AscendC's LoadDataWithTranspose, per its documentation).
// 16-bit: each iteration transposes one 16 x 16 fractal. 32-bit: each iteration takes two consecutive
// 16 x 8 fractals as the left and right halves of a 16 x 16 square (the only way two 16 x 8 make a
// square), transposes it and writes its left and right halves as two 16 x 8 fractals, dstFracGap
// apart. 8-bit: two consecutive 16 x 32 fractals are the top and bottom halves of a 32 x 32 square,
// transposed and written back as its top and bottom 16 x 32 halves. srcStride counts squares.
template <typename T>
inline void LoadDataWithTranspose(const LocalTensor<T>& dst, const LocalTensor<T>& src,
                                  const LoadData2dTransposeParams& p, TwinLoc loc = {}) {
  TwinCheckSpace(src.GetPosition(), {TPosition::A1}, "LoadDataWithTranspose source", loc);
  TwinCheckSpace(dst.GetPosition(), {TPosition::A2, TPosition::B2}, "LoadDataWithTranspose destination", loc);
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4,
                "LoadDataWithTranspose takes 8-, 16- and 32-bit types");
  constexpr uint32_t frac = 512 / sizeof(T), fracs = sizeof(T) == 2 ? 1 : 2;  // fractals per square
  constexpr uint32_t side = sizeof(T) == 1 ? 32 : 16;                          // square side, elements
  twin::CheckLocalAlign(dst.GetPhyAddr(), 512, "LoadDataWithTranspose destination (L0A/L0B)", loc);
  twin::Op op(twin::MTE1, loc, "LoadDataWithTranspose");
  for (uint32_t r = 0; r < p.repeatTimes; ++r) {
    int64_t idx = p.addrMode ? int64_t{p.startIndex} - int64_t{r} * p.srcStride : int64_t{p.startIndex} + int64_t{r} * p.srcStride;
    if (idx < 0) TwinFailAt(loc, "LoadDataWithTranspose source index below zero (addrMode decreasing)");
    uint64_t s = static_cast<uint64_t>(idx) * fracs * frac;
    uint64_t d0 = uint64_t{r} * (1u + p.dstGap) * frac, d1 = d0 + (1u + p.dstFracGap) * frac;
    TwinCheckRangeAt(src, s + fracs * frac, "LoadDataWithTranspose source", loc);
    TwinCheckRangeAt(dst, (fracs == 2 ? d1 : d0) + frac, "LoadDataWithTranspose destination", loc);
    op.Read(src.GetPhyAddr() + s, fracs * 512);
    op.Write(dst.GetPhyAddr() + d0, 512);
    if (fracs == 2) op.Write(dst.GetPhyAddr() + d1, 512);
    // Where element (row, col) of the square lives, as an offset from a fractal pair's start.
    auto at = [](uint32_t row, uint32_t col, uint64_t first, uint64_t second) -> uint64_t {
      if constexpr (sizeof(T) == 2) return first + row * 16 + col;
      else if constexpr (sizeof(T) == 4) return (col < 8 ? first : second) + row * 8 + col % 8;
      else return (row < 16 ? first : second) + (row % 16) * 32 + col;
    };
    T square[side][side];
    for (uint32_t row = 0; row < side; ++row)
      for (uint32_t col = 0; col < side; ++col)
        square[row][col] = src.TwinGet(static_cast<uint32_t>(at(row, col, s, s + frac)));
    for (uint32_t row = 0; row < side; ++row)
      for (uint32_t col = 0; col < side; ++col)
        dst.TwinSet(static_cast<uint32_t>(at(row, col, d0, d1)), square[col][row]);
  }
}

struct MmadParams {
  MmadParams() = default;
  MmadParams(uint16_t mIn, uint16_t nIn, uint16_t kIn, bool isBiasIn, int32_t fmOffsetIn, bool enSsparseIn,
             bool enWinogradAIn, bool enWinogradBIn)
      : m(mIn), n(nIn), k(kIn), isBias(isBiasIn), fmOffset(fmOffsetIn), enSsparse(enSsparseIn),
        enWinogradA(enWinogradAIn), enWinogradB(enWinogradBIn) {}
  MmadParams(uint16_t mIn, uint16_t nIn, uint16_t kIn, uint8_t unitFlagIn, bool cmatrixSourceIn, bool cmatrixInitValIn)
      : m(mIn), n(nIn), k(kIn), unitFlag(unitFlagIn), cmatrixSource(cmatrixSourceIn), cmatrixInitVal(cmatrixInitValIn) {}
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
  bool cmatrixSource = false;  // true: the initial C comes from the bias table
  bool cmatrixInitVal = true;  // true: C = A * B, false: C += A * B
};

// C (L0C) [+]= A (L0A) * B (L0B) on the cube (PIPE_M), over whole fractals: k runs to a multiple
// of C0, so the padding of A and B along k must be zero (InitConstValue) or it pollutes C.
namespace twin {
// The body of every Mmad: `bias` (the bias table, one word per column) starts C when given.
template <typename C, typename T>
inline void MmadBody(const LocalTensor<C>& c, const LocalTensor<T>& a, const LocalTensor<T>& b,
                     const LocalTensor<C>* bias, const MmadParams& p, const TwinLoc& loc) {
  TwinCheckSpace(c.GetPosition(), {TPosition::CO1}, "Mmad C", loc);
  TwinCheckSpace(a.GetPosition(), {TPosition::A2}, "Mmad A", loc);
  TwinCheckSpace(b.GetPosition(), {TPosition::B2}, "Mmad B", loc);
  if (p.enSsparse || p.enWinogradA || p.enWinogradB || p.fmOffset != 0)
    TwinFailAt(loc, "Mmad with sparse, winograd or fmOffset is not modelled by the twin");
  if (!bias && (p.isBias || p.cmatrixSource))
    TwinFailAt(loc, "Mmad with isBias / cmatrixSource needs the bias overload Mmad(dst, fm, filter, bias, params)");
  if (bias) TwinCheckSpace(bias->GetPosition(), {TPosition::C2}, "Mmad bias", loc);
  static_assert(std::is_integral_v<T> == std::is_integral_v<C>,
                "Mmad: int8 inputs accumulate into an int32 L0C, float inputs into a float one");
  static_assert(!std::is_integral_v<T> || (sizeof(T) == 1 && sizeof(C) == 4), "Mmad: int8 x int8 -> int32 only");
  // int8 products add up exactly in int32 (the cube's accumulator); float ones in float.
  using Acc = std::conditional_t<std::is_integral_v<T>, int32_t, float>;
  constexpr uint32_t c0 = TwinC0<T>();
  const uint32_t m1 = (p.m + 15u) / 16u, n1 = (p.n + 15u) / 16u, k1 = (p.k + c0 - 1u) / c0;
  TwinCheckRangeAt(a, uint64_t{m1} * k1 * 16u * c0, "Mmad A (L0A)", loc);
  TwinCheckRangeAt(b, uint64_t{k1} * n1 * c0 * 16u, "Mmad B (L0B)", loc);
  TwinCheckRangeAt(c, uint64_t{m1} * n1 * 256u, "Mmad C (L0C)", loc);
  twin::CheckLocalAlign(a.GetPhyAddr(), 512, "Mmad A (L0A)", loc);
  twin::CheckLocalAlign(b.GetPhyAddr(), 512, "Mmad B (L0B)", loc);
  twin::CheckLocalAlign(c.GetPhyAddr(), 256 * sizeof(C), "Mmad C (L0C, 256 elements)", loc);
  twin::Op op(twin::M, loc, "Mmad");
  op.Read(a.GetPhyAddr(), uint64_t{m1} * k1 * 512u);
  op.Read(b.GetPhyAddr(), uint64_t{k1} * n1 * 512u);
  if (bias) {
    TwinCheckRangeAt(*bias, uint64_t{n1} * 16u, "Mmad bias (bias table, one word per column)", loc);
    op.Read(bias->GetPhyAddr(), uint64_t{n1} * 16u * sizeof(C));
  } else if (!p.cmatrixInitVal) {
    op.Read(c.GetPhyAddr(), uint64_t{m1} * n1 * 256u * sizeof(C));
  }
  op.Write(c.GetPhyAddr(), uint64_t{m1} * n1 * 256u * sizeof(C));
  for (uint32_t m = 0; m < m1 * 16; ++m) {
    for (uint32_t n = 0; n < n1 * 16; ++n) {
      Acc acc = 0;
      for (uint32_t k = 0; k < k1 * c0; ++k) {
        Acc av = static_cast<Acc>(a.TwinGet(((m / 16) * k1 + k / c0) * 16 * c0 + (m % 16) * c0 + k % c0));
        Acc bv = static_cast<Acc>(b.TwinGet(((k / c0) * n1 + n / 16) * c0 * 16 + (n % 16) * c0 + k % c0));
        acc += av * bv;
      }
      uint32_t ci = ((n / 16) * m1 + m / 16) * 256 + (m % 16) * 16 + n % 16;
      Acc prev = bias ? static_cast<Acc>(bias->TwinGet(n)) : p.cmatrixInitVal ? Acc(0) : static_cast<Acc>(c.TwinGet(ci));
      c.TwinSet(ci, C(prev + acc));
    }
  }
}
}  // namespace twin

template <typename C, typename T>
inline void Mmad(const LocalTensor<C>& c, const LocalTensor<T>& a, const LocalTensor<T>& b, const MmadParams& p,
                 TwinLoc loc = {}) {
  twin::MmadBody(c, a, b, static_cast<const LocalTensor<C>*>(nullptr), p, loc);
}

// C = A * B + bias: the bias table (C2, from DataCopy L1 -> C2) starts every row of C.
template <typename C, typename T>
inline void Mmad(const LocalTensor<C>& c, const LocalTensor<T>& a, const LocalTensor<T>& b, const LocalTensor<C>& bias,
                 const MmadParams& p, TwinLoc loc = {}) {
  twin::MmadBody(c, a, b, &bias, p, loc);
}

enum class QuantMode_t { NoQuant, F322F16, F322BF16, DEQF16, VDEQF16, QF322B8_PRE, VQF322B8_PRE, REQ8, VREQ8, DEQS322F16 };

enum class CO2Layout : uint8_t { NZ = 0, ROW_MAJOR, COLUMN_MAJOR };
struct FixpipeConfig {
  CO2Layout format;
};
constexpr FixpipeConfig CFG_NZ = {CO2Layout::NZ};
constexpr FixpipeConfig CFG_ROW_MAJOR = {CO2Layout::ROW_MAJOR};
constexpr FixpipeConfig CFG_COLUMN_MAJOR = {CO2Layout::COLUMN_MAJOR};

struct FixpipeParamsV220 {
  FixpipeParamsV220() = default;
  FixpipeParamsV220(uint16_t nSizeIn, uint16_t mSizeIn, uint16_t srcStrideIn, uint32_t dstStrideIn, bool reluEnIn)
      : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), reluEn(reluEnIn) {}
  FixpipeParamsV220(uint16_t nSizeIn, uint16_t mSizeIn, uint16_t srcStrideIn, uint32_t dstStrideIn, bool reluEnIn,
                    QuantMode_t quantPreIn, int64_t deqScalarIn, uint16_t ndNumIn, uint16_t srcNdStrideIn,
                    uint16_t dstNdStrideIn, uint8_t unitFlagIn)
      : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), quantPre(quantPreIn),
        deqScalar(static_cast<uint64_t>(deqScalarIn)), ndNum(ndNumIn), srcNdStride(srcNdStrideIn),
        dstNdStride(dstNdStrideIn), reluEn(reluEnIn), unitFlag(unitFlagIn) {}
  uint16_t nSize = 0;
  uint16_t mSize = 0;
  uint16_t srcStride = 0;  // C0 rows (16 elements) between the fractal columns of L0C: m padded to 16
  uint32_t dstStride = 0;  // ND row stride of the destination, elements
  QuantMode_t quantPre = QuantMode_t::NoQuant;
  uint64_t deqScalar = 0;
  uint16_t ndNum = 1;
  uint16_t srcNdStride = 0;
  uint16_t dstNdStride = 0;
  bool reluEn = false;
  uint8_t unitFlag = 0;
  bool isChannelSplit = false;
};

namespace twin {
inline bool VectorQuant(QuantMode_t q) {
  return q == QuantMode_t::VDEQF16 || q == QuantMode_t::VQF322B8_PRE || q == QuantMode_t::VREQ8;
}

// A quantization scale word (deqScalar, or one uint64_t of the cbufWorkspace per output channel)
// carries the float scale's bits in its low 32 bits, as AscendC's examples build it:
// static_cast<uint64_t>(*reinterpret_cast<int32_t*>(&scale)).
inline float QuantScale(uint64_t word) {
  uint32_t bits = static_cast<uint32_t>(word);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// The (L0C dtype, destination dtype) pairs each quantPre mode converts between (FixpipeParamsV220).
template <typename D, typename C>
inline void CheckQuantPair(QuantMode_t q, bool workspace, const TwinLoc& loc) {
  constexpr bool f32 = std::is_same_v<C, float>, s32 = std::is_same_v<C, int32_t>;
  constexpr bool b8 = std::is_same_v<D, int8_t> || std::is_same_v<D, uint8_t>;
  bool ok = false;
  switch (q) {
    case QuantMode_t::NoQuant: ok = std::is_same_v<D, C>; break;
    case QuantMode_t::F322F16: ok = f32 && std::is_same_v<D, half>; break;
    case QuantMode_t::F322BF16: ok = f32 && std::is_same_v<D, bfloat16_t>; break;
    case QuantMode_t::DEQF16: case QuantMode_t::VDEQF16: ok = s32 && std::is_same_v<D, half>; break;
    case QuantMode_t::QF322B8_PRE: case QuantMode_t::VQF322B8_PRE: ok = f32 && b8; break;
    case QuantMode_t::REQ8: case QuantMode_t::VREQ8: ok = s32 && b8; break;
    default: TwinFailAt(loc, "Fixpipe quantPre DEQS322F16 is not modelled by the twin");
  }
  if (!ok)
    TwinFailAt(loc, "Fixpipe quantPre does not convert this L0C dtype to this destination dtype (NoQuant: same "
                    "dtype; F322F16/F322BF16: float -> half/bf16; DEQF16/VDEQF16: int32 -> half; "
                    "QF322B8_PRE/VQF322B8_PRE: float -> int8; REQ8/VREQ8: int32 -> int8)");
  if (VectorQuant(q) != workspace)
    TwinFailAt(loc, workspace ? "Fixpipe got a cbufWorkspace but quantPre is not a per-channel (V*) mode"
                              : "Fixpipe quantPre VDEQF16 / VQF322B8_PRE / VREQ8 needs its scales: the cbufWorkspace "
                                "overload, or SetFixPipeConfig on a fixpipe-buffer (C2PIPE2GM) tensor");
}

template <typename D>
inline D QuantStore(double v) {
  if constexpr (std::is_same_v<D, int8_t> || std::is_same_v<D, uint8_t>) {
    constexpr double lo = std::is_same_v<D, int8_t> ? -128.0 : 0.0, hi = std::is_same_v<D, int8_t> ? 127.0 : 255.0;
    return static_cast<D>(std::fmin(std::fmax(std::nearbyint(v), lo), hi));  // round to nearest even, saturate
  } else if constexpr (std::is_integral_v<D>) {
    return static_cast<D>(v);
  } else {
    return D(static_cast<float>(v));
  }
}

// L0C (NZ) -> the destination, converting on the way: the body of every Fixpipe. `place(p, nd, m, n)`
// is the destination element of row m, column n of the nd-th matrix (ND or NZ layout).
template <typename D, typename C, typename Place, typename Store>
inline void FixpipeBody(const LocalTensor<C>& src, const LocalTensor<uint64_t>* workspace, const FixpipeParamsV220& p,
                        const TwinLoc& loc, Place place, Store store) {
  TwinCheckSpace(src.GetPosition(), {TPosition::CO1}, "Fixpipe source", loc);
  if (p.isChannelSplit) TwinFailAt(loc, "Fixpipe with channel split is not modelled by the twin");
  if (p.ndNum > 1 && (p.srcNdStride == 0 || p.dstNdStride == 0))
    TwinFailAt(loc, "Fixpipe with ndNum > 1 needs non-zero srcNdStride (1024-byte fractals) and dstNdStride (elements)");
  CheckQuantPair<D, C>(p.quantPre, workspace != nullptr, loc);
  if (p.srcStride < p.mSize) TwinFailAt(loc, "Fixpipe srcStride (L0C column height) is below mSize");
  if (workspace) {
    TwinCheckSpace(workspace->GetPosition(), {TPosition::A1, TPosition::C2PIPE2GM}, "Fixpipe scales", loc);
    TwinCheckRangeAt(*workspace, p.nSize, "Fixpipe cbufWorkspace (one scale per output column)", loc);
  }
  const bool scaled = p.quantPre != QuantMode_t::NoQuant && p.quantPre != QuantMode_t::F322F16 &&
                      p.quantPre != QuantMode_t::F322BF16;
  const float scalar = QuantScale(p.deqScalar);
  const uint32_t n1 = (p.nSize + 15u) / 16u;
  // ndNum NZ matrices, srcNdStride 1024-byte fractals apart in L0C.
  for (uint32_t nd = 0; nd < (p.ndNum ? p.ndNum : 1u); ++nd) {
    const uint64_t s0 = uint64_t{nd} * p.srcNdStride * (1024 / sizeof(C));
    TwinCheckRangeAt(src, s0 + uint64_t{n1 - (n1 ? 1 : 0)} * p.srcStride * 16u + uint64_t{p.mSize} * 16u,
                     "Fixpipe source (L0C)", loc);
    for (uint32_t m = 0; m < p.mSize; ++m) {
      for (uint32_t n = 0; n < p.nSize; ++n) {
        double v = static_cast<double>(src.TwinGet(static_cast<uint32_t>(s0 + (n / 16) * p.srcStride * 16 + m * 16 + n % 16)));
        if (scaled) v *= workspace ? QuantScale(workspace->TwinGet(n)) : scalar;
        if (p.reluEn && v < 0.0) v = 0.0;
        store(place(p, nd, m, n), QuantStore<D>(v));
      }
    }
  }
}

// Destination element of (nd, m, n). ND (CFG_ROW_MAJOR): dstStride elements per row, matrices
// dstNdStride elements apart. NZ (CFG_NZ): columns of 16, each m rows of 16 elements, dstStride
// 32-byte blocks from one column's start to the next.
template <typename D, CO2Layout layout>
inline uint64_t FixpipePlace(const FixpipeParamsV220& p, uint32_t nd, uint32_t m, uint32_t n) {
  if constexpr (layout == CO2Layout::ROW_MAJOR) return uint64_t{nd} * p.dstNdStride + uint64_t{m} * p.dstStride + n;
  return uint64_t{n / 16} * p.dstStride * (32 / sizeof(D)) + uint64_t{m} * 16 + n % 16;
}

// The bytes a Fixpipe writes, row by row (for the pipe-synchronisation record).
template <typename D, CO2Layout layout, typename Write>
inline void FixpipeWrites(const FixpipeParamsV220& p, const TwinLoc& loc, Write write) {
  static_assert(layout != CO2Layout::COLUMN_MAJOR, "the twin models Fixpipe to ND (CFG_ROW_MAJOR) and NZ (CFG_NZ)");
  if constexpr (layout == CO2Layout::NZ) {
    if (p.ndNum > 1) TwinFailAt(loc, "Fixpipe to NZ (CFG_NZ) has no ndNum > 1");
    if (p.dstStride * 32u < uint64_t{p.mSize} * 16u * sizeof(D))
      TwinFailAt(loc, "Fixpipe to NZ: dstStride (32-byte blocks between 16-column groups) is below mSize * 16 elements");
    for (uint32_t j = 0; j < (p.nSize + 15u) / 16u; ++j)
      write(FixpipePlace<D, layout>(p, 0, 0, j * 16), uint64_t{p.mSize} * 16u * sizeof(D));
  } else {
    for (uint32_t nd = 0; nd < (p.ndNum ? p.ndNum : 1u); ++nd)
      for (uint32_t m = 0; m < p.mSize; ++m) write(FixpipePlace<D, layout>(p, nd, m, 0), uint64_t{p.nSize} * sizeof(D));
  }
}

template <typename D, typename C, CO2Layout layout>
inline void FixpipeToGm(const GlobalTensor<D>& dst, const LocalTensor<C>& src, const LocalTensor<uint64_t>* workspace,
                        const FixpipeParamsV220& p, const TwinLoc& loc) {
  Op op(FIX, loc, "Fixpipe");
  op.Read(src.GetPhyAddr(), (uint64_t{p.ndNum ? p.ndNum - 1u : 0u} * p.srcNdStride * (1024 / sizeof(C)) +
                             uint64_t{(p.nSize + 15u) / 16u} * p.srcStride * 16u) * sizeof(C));
  if (workspace) op.Read(workspace->GetPhyAddr(), uint64_t{p.nSize} * sizeof(uint64_t));
  FixpipeWrites<D, layout>(p, loc, [&](uint64_t at, uint64_t bytes) { op.WriteGm(dst.GetPhyAddr() + at, bytes); });
  FixpipeBody<D>(src, workspace, p, loc, FixpipePlace<D, layout>,
                 [&dst](uint64_t i, D v) { GmStore(dst.GetPhyAddr() + i, &v, 1); });
}

template <typename D, typename C, CO2Layout layout>
inline void FixpipeToL1(const LocalTensor<D>& dst, const LocalTensor<C>& src, const LocalTensor<uint64_t>* workspace,
                        const FixpipeParamsV220& p, const TwinLoc& loc) {
  TwinCheckSpace(dst.GetPosition(), {TPosition::A1}, "Fixpipe destination", loc);
  if (p.ndNum > 1) TwinFailAt(loc, "Fixpipe to L1 with ndNum > 1 is not modelled by the twin");
  Op op(FIX, loc, "Fixpipe");
  op.Read(src.GetPhyAddr(), uint64_t{(p.nSize + 15u) / 16u} * p.srcStride * 16u * sizeof(C));
  if (workspace) op.Read(workspace->GetPhyAddr(), uint64_t{p.nSize} * sizeof(uint64_t));
  FixpipeWrites<D, layout>(p, loc, [&](uint64_t at, uint64_t bytes) {
    TwinCheckRangeAt(dst, at + bytes / sizeof(D), "Fixpipe destination (L1)", loc);
    op.Write(dst.GetPhyAddr() + at, bytes);
  });
  FixpipeBody<D>(src, workspace, p, loc, FixpipePlace<D, layout>,
                 [&dst](uint64_t i, D v) { dst.TwinSet(static_cast<uint32_t>(i), v); });
}
}  // namespace twin

namespace twin {
// The scales SetFixPipeConfig points at, for a per-channel quantPre without a cbufWorkspace.
inline const LocalTensor<uint64_t>* FixpipeBufferScales(QuantMode_t q, LocalTensor<uint64_t>& holder) {
  const Core& c = CurrentCore();
  if (!VectorQuant(q) || c.fixQuantTable == nullptr) return nullptr;
  holder = LocalTensor<uint64_t>(c.fixQuantTable, c.fixQuantWords, TPosition::C2PIPE2GM, -1);
  return &holder;
}
}  // namespace twin

// Points the per-channel quantization modes at `quantPre` in the fixpipe buffer (C2PIPE2GM),
// which a DataCopy from L1 filled; in effect for every Fixpipe until set again.
template <typename T>
inline void SetFixPipeConfig(const LocalTensor<T>& quantPre, bool isUnitFlag = false, TwinLoc loc = {}) {
  static_assert(std::is_same_v<T, uint64_t>, "SetFixPipeConfig takes the uint64_t quantization tensor");
  TwinCheckSpace(quantPre.GetPosition(), {TPosition::C2PIPE2GM}, "SetFixPipeConfig", loc);
  twin::CheckLocalAlign(quantPre.GetPhyAddr(), 128, "SetFixPipeConfig (fixpipe buffer address)", loc);
  if (isUnitFlag) TwinFailAt(loc, "SetFixPipeConfig with isUnitFlag is not modelled by the twin");
  twin::Core& c = twin::CurrentCore();
  c.fixQuantTable = quantPre.GetPhyAddr();
  c.fixQuantWords = quantPre.GetSize();
}

// L0C -> GM on FIX; quantPre converts on the way (scalar modes scale by deqScalar, per-channel
// ones by the table SetFixPipeConfig set).
template <typename D, typename C, const FixpipeConfig& config = CFG_ROW_MAJOR>
inline void Fixpipe(const GlobalTensor<D>& dst, const LocalTensor<C>& src, const FixpipeParamsV220& p, TwinLoc loc = {}) {
  LocalTensor<uint64_t> scales;
  twin::FixpipeToGm<D, C, config.format>(dst, src, twin::FixpipeBufferScales(p.quantPre, scales), p, loc);
}

// L0C -> GM with per-channel quantization: one uint64_t scale word per output column in L1.
template <typename D, typename C, const FixpipeConfig& config = CFG_ROW_MAJOR>
inline void Fixpipe(const GlobalTensor<D>& dst, const LocalTensor<C>& src, const LocalTensor<uint64_t>& cbufWorkspace,
                    const FixpipeParamsV220& p, TwinLoc loc = {}) {
  twin::FixpipeToGm<D, C, config.format>(dst, src, &cbufWorkspace, p, loc);
}

// L0C -> L1 on FIX (e.g. to feed the result into the next Mmad).
template <typename D, typename C, const FixpipeConfig& config = CFG_ROW_MAJOR>
inline void Fixpipe(const LocalTensor<D>& dst, const LocalTensor<C>& src, const FixpipeParamsV220& p, TwinLoc loc = {}) {
  LocalTensor<uint64_t> scales;
  twin::FixpipeToL1<D, C, config.format>(dst, src, twin::FixpipeBufferScales(p.quantPre, scales), p, loc);
}

template <typename D, typename C, const FixpipeConfig& config = CFG_ROW_MAJOR>
inline void Fixpipe(const LocalTensor<D>& dst, const LocalTensor<C>& src, const LocalTensor<uint64_t>& cbufWorkspace,
                    const FixpipeParamsV220& p, TwinLoc loc = {}) {
  twin::FixpipeToL1<D, C, config.format>(dst, src, &cbufWorkspace, p, loc);
}

}  // namespace AscendC
