// DataCopy / DataCopyPad between global and local memory: GM -> local on MTE2, local -> GM on
// MTE3, UB -> UB on V.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace AscendC {

// The MTEs move whole 32-byte blocks: an unaligned DataCopy silently moves the wrong bytes on
// hardware, so the twin refuses it (DataCopyPad is the tail path).
inline void TwinCheckAligned(uint64_t bytes, const char* op, const TwinLoc& loc = {}) {
  if (bytes % 32 != 0) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "%s of %llu bytes is not a multiple of 32 (use DataCopyPad)", op,
                  static_cast<unsigned long long>(bytes));
    TwinFailAt(loc, msg);
  }
}

// Counts in elements (a multiple of 32 bytes).
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count, TwinLoc loc = {}) {
  TwinCheckAligned(uint64_t{count} * sizeof(T), "DataCopy GM->local", loc);
  TwinCheckRangeAt(dst, count, "DataCopy GM->local", loc);
  twin::CheckLocalAlign(dst.GetPhyAddr(), 32, "DataCopy destination", loc);
  twin::Op op(twin::MTE2, loc, "DataCopy");
  op.ReadGm(src.GetPhyAddr(), uint64_t{count} * sizeof(T));
  op.Write(dst.GetPhyAddr(), uint64_t{count} * sizeof(T));
  std::memcpy(dst.GetPhyAddr(), src.GetPhyAddr(), uint64_t{count} * sizeof(T));
}

template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count, TwinLoc loc = {}) {
  TwinCheckAligned(uint64_t{count} * sizeof(T), "DataCopy local->GM", loc);
  TwinCheckRangeAt(src, count, "DataCopy local->GM", loc);
  twin::CheckLocalAlign(src.GetPhyAddr(), 32, "DataCopy source", loc);
  twin::Op op(twin::MTE3, loc, "DataCopy");
  op.Read(src.GetPhyAddr(), uint64_t{count} * sizeof(T));
  op.WriteGm(dst.GetPhyAddr(), uint64_t{count} * sizeof(T));
  twin::GmStore(dst.GetPhyAddr(), src.GetPhyAddr(), count);
}

namespace twin {
template <typename T>
constexpr bool kBiasWord = std::is_same_v<T, float> || std::is_same_v<T, int32_t>;  // what the bias table holds
template <typename D, typename S>
inline void CopyToBiasTable(const LocalTensor<D>& dst, const LocalTensor<S>& src, uint16_t count, uint64_t lenBytes,
                            uint64_t srcGapBytes, uint64_t dstGapBytes, const TwinLoc& loc);
inline void CopyToFixpipeBuffer(const LocalTensor<uint64_t>& dst, const LocalTensor<uint64_t>& src, uint16_t count,
                                uint64_t lenBytes, uint64_t srcStepBytes, uint64_t dstStepBytes, const TwinLoc& loc);
}  // namespace twin

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count, TwinLoc loc = {}) {
  // L1 -> the bias table: count elements, rounded down to whole 32-byte blocks (as CANN documents).
  if (SpaceOf(dst.GetPosition()) == TwinSpace::BT) {
    if constexpr (twin::kBiasWord<T>) {
      return twin::CopyToBiasTable(dst, src, 1, uint64_t{count} * sizeof(T) / 32u * 32u, 0, 0, loc);
    } else {
      TwinFailAt(loc, "the bias table (C2) holds float or int32_t words");
    }
  }
  // L1 -> the fixpipe buffer: count uint64_t quantization words, rounded down to 32-byte blocks.
  if (SpaceOf(dst.GetPosition()) == TwinSpace::FB) {
    if constexpr (std::is_same_v<T, uint64_t>) {
      const uint64_t bytes = uint64_t{count} * sizeof(T) / 32u * 32u;
      return twin::CopyToFixpipeBuffer(dst, src, 1, bytes, bytes, bytes, loc);
    } else {
      TwinFailAt(loc, "the fixpipe buffer (C2PIPE2GM) takes uint64_t quantization words");
    }
  }
  TwinCheckAligned(uint64_t{count} * sizeof(T), "DataCopy local->local", loc);
  TwinCheckRangeAt(dst, count, "DataCopy local->local", loc);
  TwinCheckRangeAt(src, count, "DataCopy local->local", loc);
  twin::CheckLocalAlign(dst.GetPhyAddr(), 32, "DataCopy destination", loc);
  twin::CheckLocalAlign(src.GetPhyAddr(), 32, "DataCopy source", loc);
  // UB -> UB runs on the vector pipe; UB -> L1 on MTE3.
  twin::Op op(SpaceOf(dst.GetPosition()) == TwinSpace::UB ? twin::V : twin::MTE3, loc, "DataCopy");
  op.Read(src.GetPhyAddr(), uint64_t{count} * sizeof(T));
  op.Write(dst.GetPhyAddr(), uint64_t{count} * sizeof(T));
  std::memmove(dst.GetPhyAddr(), src.GetPhyAddr(), uint64_t{count} * sizeof(T));
}

// blockCount blocks of blockLen 32-byte units; the strides are the gaps between blocks, in
// 32-byte units on both sides.
struct DataCopyParams {
  DataCopyParams() = default;
  DataCopyParams(uint16_t count, uint16_t len, uint16_t srcStrideIn, uint16_t dstStrideIn)
      : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn) {}
  uint16_t blockCount = 1;
  uint16_t blockLen = 0;
  uint16_t srcStride = 0;
  uint16_t dstStride = 0;
};

namespace twin {
template <typename D, typename S>
inline void CopyBlocks(D* dst, const S* src, const DataCopyParams& p) {
  auto* d = reinterpret_cast<uint8_t*>(dst);
  auto* s = reinterpret_cast<const uint8_t*>(src);
  for (uint32_t b = 0; b < p.blockCount; ++b)
    std::memmove(d + uint64_t{b} * (p.blockLen + p.dstStride) * 32, s + uint64_t{b} * (p.blockLen + p.srcStride) * 32,
                 uint64_t{p.blockLen} * 32);
}
inline uint64_t SpanBytes(uint16_t count, uint16_t len, uint16_t gap) {
  return count == 0 ? 0 : (uint64_t{count - 1u} * (len + gap) + len) * 32;
}
}  // namespace twin

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p, TwinLoc loc = {}) {
  TwinCheckRangeAt(dst, twin::SpanBytes(p.blockCount, p.blockLen, p.dstStride) / sizeof(T), "DataCopy GM->local", loc);
  twin::Op op(twin::MTE2, loc, "DataCopy");
  for (uint32_t b = 0; b < p.blockCount; ++b) {
    op.ReadGm(reinterpret_cast<const uint8_t*>(src.GetPhyAddr()) + uint64_t{b} * (p.blockLen + p.srcStride) * 32, uint64_t{p.blockLen} * 32);
    op.Write(reinterpret_cast<uint8_t*>(dst.GetPhyAddr()) + uint64_t{b} * (p.blockLen + p.dstStride) * 32, uint64_t{p.blockLen} * 32);
  }
  twin::CopyBlocks(dst.GetPhyAddr(), src.GetPhyAddr(), p);
}

template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p, TwinLoc loc = {}) {
  TwinCheckRangeAt(src, twin::SpanBytes(p.blockCount, p.blockLen, p.srcStride) / sizeof(T), "DataCopy local->GM", loc);
  twin::Op op(twin::MTE3, loc, "DataCopy");
  for (uint32_t b = 0; b < p.blockCount; ++b) {
    op.Read(reinterpret_cast<const uint8_t*>(src.GetPhyAddr()) + uint64_t{b} * (p.blockLen + p.srcStride) * 32, uint64_t{p.blockLen} * 32);
    op.WriteGm(reinterpret_cast<uint8_t*>(dst.GetPhyAddr()) + uint64_t{b} * (p.blockLen + p.dstStride) * 32, uint64_t{p.blockLen} * 32);
  }
  for (uint32_t b = 0; b < p.blockCount; ++b)
    twin::GmStore(dst.GetPhyAddr() + uint64_t{b} * (p.blockLen + p.dstStride) * 32 / sizeof(T),
                  src.GetPhyAddr() + uint64_t{b} * (p.blockLen + p.srcStride) * 32 / sizeof(T), uint64_t{p.blockLen} * 32 / sizeof(T));
}

namespace twin {
// L1 -> the bias table (C1 -> C2) on MTE1: `count` bursts of lenBytes of the destination, the gaps in
// bytes; a half source is widened to float on the way (so it reads half the bytes it writes).
template <typename D, typename S>
inline void CopyToBiasTable(const LocalTensor<D>& dst, const LocalTensor<S>& src, uint16_t count, uint64_t lenBytes,
                            uint64_t srcGapBytes, uint64_t dstGapBytes, const TwinLoc& loc) {
  static_assert(kBiasWord<D>, "the bias table holds float or int32 words");
  static_assert(sizeof(S) == sizeof(D) || (std::is_same_v<D, float> && std::is_same_v<S, half>),
                "L1 -> bias table copies float / int32, or widens half to float");
  if (SpaceOf(src.GetPosition()) != TwinSpace::L1) TwinFailAt(loc, "DataCopy to the bias table (C2) reads L1 (C1) only");
  CheckLocalAlign(dst.GetPhyAddr(), 64, "DataCopy destination (bias table)", loc);
  CheckLocalAlign(src.GetPhyAddr(), 32, "DataCopy source (L1)", loc);
  const uint64_t n = lenBytes / sizeof(D), dstStep = (lenBytes + dstGapBytes) / sizeof(D);
  const uint64_t srcStep = (n * sizeof(S) + srcGapBytes) / sizeof(S);
  TwinCheckRangeAt(dst, count == 0 ? 0 : (count - 1u) * dstStep + n, "DataCopy to the bias table", loc);
  Op op(MTE1, loc, "DataCopy (L1 -> bias table)");
  for (uint64_t b = 0; b < count; ++b) {
    const uint64_t s = b * srcStep, d = b * dstStep;
    TwinCheckRangeAt(src, s + n, "DataCopy to the bias table (source)", loc);
    op.Read(src.GetPhyAddr() + s, n * sizeof(S));
    op.Write(dst.GetPhyAddr() + d, n * sizeof(D));
    for (uint64_t i = 0; i < n; ++i)
      dst.TwinSet(static_cast<uint32_t>(d + i), static_cast<D>(static_cast<float>(src.TwinGet(static_cast<uint32_t>(s + i)))));
  }
}

// DataCopyParams into the bias table, in the 910B's units (CANN's L1ToBiasTable page): blockLen and
// dstGap in 64-byte units of the destination, srcGap in 32-byte blocks.
template <typename D, typename S>
inline void CopyToBiasTable(const LocalTensor<D>& dst, const LocalTensor<S>& src, const DataCopyParams& p,
                            const TwinLoc& loc) {
  CopyToBiasTable(dst, src, p.blockCount, uint64_t{p.blockLen} * 64u, uint64_t{p.srcStride} * 32u,
                  uint64_t{p.dstStride} * 64u, loc);
}

// L1 -> the fixpipe buffer (C1 -> C2PIPE2GM) on FIX, where Fixpipe reads it: `count` bursts of
// lenBytes, the steps measured from one burst's start to the next one's (as CANN's L1ToFixpipe page
// defines srcGap / dstGap for this path).
inline void CopyToFixpipeBuffer(const LocalTensor<uint64_t>& dst, const LocalTensor<uint64_t>& src, uint16_t count,
                                uint64_t lenBytes, uint64_t srcStepBytes, uint64_t dstStepBytes, const TwinLoc& loc) {
  if (SpaceOf(src.GetPosition()) != TwinSpace::L1)
    TwinFailAt(loc, "DataCopy to the fixpipe buffer (C2PIPE2GM) reads L1 (C1) only");
  CheckLocalAlign(dst.GetPhyAddr(), 128, "DataCopy destination (fixpipe buffer)", loc);
  CheckLocalAlign(src.GetPhyAddr(), 32, "DataCopy source (L1)", loc);
  const uint64_t n = lenBytes / 8u;
  Op op(FIX, loc, "DataCopy (L1 -> fixpipe buffer)");
  for (uint64_t b = 0; b < count; ++b) {
    const uint64_t s = b * srcStepBytes / 8u, d = b * dstStepBytes / 8u;
    TwinCheckRangeAt(src, s + n, "DataCopy to the fixpipe buffer (source)", loc);
    TwinCheckRangeAt(dst, d + n, "DataCopy to the fixpipe buffer", loc);
    op.Read(src.GetPhyAddr() + s, lenBytes);
    op.Write(dst.GetPhyAddr() + d, lenBytes);
    std::memmove(dst.GetPhyAddr() + d, src.GetPhyAddr() + s, lenBytes);
  }
}

// DataCopyParams into the fixpipe buffer, in the 910B's units: blockLen and dstGap 128 bytes,
// srcGap 32-byte blocks, the gaps from start to start.
inline void CopyToFixpipeBuffer(const LocalTensor<uint64_t>& dst, const LocalTensor<uint64_t>& src,
                                const DataCopyParams& p, const TwinLoc& loc) {
  CopyToFixpipeBuffer(dst, src, p.blockCount, uint64_t{p.blockLen} * 128u, uint64_t{p.srcStride} * 32u,
                      uint64_t{p.dstStride} * 128u, loc);
}
}  // namespace twin

// L1 half -> bias table float.
template <typename D, typename S>
inline void DataCopy(const LocalTensor<D>& dst, const LocalTensor<S>& src, const DataCopyParams& p, TwinLoc loc = {}) {
  if (SpaceOf(dst.GetPosition()) != TwinSpace::BT)
    TwinFailAt(loc, "DataCopy between different dtypes converts only on the way into the bias table (C2)");
  twin::CopyToBiasTable(dst, src, p, loc);
}

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p, TwinLoc loc = {}) {
  if (SpaceOf(dst.GetPosition()) == TwinSpace::BT) {
    if constexpr (twin::kBiasWord<T>) {
      return twin::CopyToBiasTable(dst, src, p, loc);
    } else {
      TwinFailAt(loc, "the bias table (C2) holds float or int32_t words");
    }
  }
  if (SpaceOf(dst.GetPosition()) == TwinSpace::FB) {
    if constexpr (std::is_same_v<T, uint64_t>) {
      return twin::CopyToFixpipeBuffer(dst, src, p, loc);
    } else {
      TwinFailAt(loc, "the fixpipe buffer (C2PIPE2GM) takes uint64_t quantization words");
    }
  }
  TwinCheckRangeAt(dst, twin::SpanBytes(p.blockCount, p.blockLen, p.dstStride) / sizeof(T), "DataCopy local->local", loc);
  TwinCheckRangeAt(src, twin::SpanBytes(p.blockCount, p.blockLen, p.srcStride) / sizeof(T), "DataCopy local->local", loc);
  twin::Op op(SpaceOf(dst.GetPosition()) == TwinSpace::UB ? twin::V : twin::MTE3, loc, "DataCopy");
  for (uint32_t b = 0; b < p.blockCount; ++b) {
    op.Read(reinterpret_cast<const uint8_t*>(src.GetPhyAddr()) + uint64_t{b} * (p.blockLen + p.srcStride) * 32, uint64_t{p.blockLen} * 32);
    op.Write(reinterpret_cast<uint8_t*>(dst.GetPhyAddr()) + uint64_t{b} * (p.blockLen + p.dstStride) * 32, uint64_t{p.blockLen} * 32);
  }
  twin::CopyBlocks(dst.GetPhyAddr(), src.GetPhyAddr(), p);
}

// blockLen in bytes; GM-side strides in bytes, local-side strides in 32-byte blocks.
struct DataCopyExtParams {
  DataCopyExtParams() = default;
  DataCopyExtParams(uint16_t count, uint32_t len, uint32_t srcStrideIn, uint32_t dstStrideIn, uint32_t rsvIn)
      : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn) {}
  uint16_t blockCount = 1;
  uint32_t blockLen = 0;
  uint32_t srcStride = 0;
  uint32_t dstStride = 0;
  uint32_t rsv = 0;
};

template <typename T>
struct DataCopyPadExtParams {
  DataCopyPadExtParams() = default;
  DataCopyPadExtParams(bool isPadValue, uint8_t leftPadValue, uint8_t rightPadValue, T padValue)
      : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue) {}
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  T paddingValue = T(0);
};

struct DataCopyPadParams {
  DataCopyPadParams() = default;
  DataCopyPadParams(bool isPadValue, uint8_t leftPadValue, uint8_t rightPadValue, uint64_t padValue)
      : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue) {}
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  uint64_t paddingValue = 0;
};

inline uint32_t TwinCeil32(uint32_t bytes) { return (bytes + 31u) / 32u * 32u; }

// GM -> local: each block lands at a 32-byte boundary in local memory; the gap up to it is
// filled with paddingValue when isPad (so a reduction can read it).
template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                        const DataCopyPadExtParams<T>& pad, TwinLoc loc = {}) {
  const uint8_t* s = reinterpret_cast<const uint8_t*>(src.GetPhyAddr());
  uint8_t* d = reinterpret_cast<uint8_t*>(dst.GetPhyAddr());
  uint32_t dstBlock = TwinCeil32(p.blockLen) + p.dstStride * 32u;
  TwinCheckRangeAt(dst, (uint64_t{dstBlock} * (p.blockCount ? p.blockCount - 1u : 0u) + TwinCeil32(p.blockLen)) / sizeof(T),
                   "DataCopyPad GM->local", loc);
  twin::CheckLocalAlign(dst.GetPhyAddr(), 32, "DataCopyPad destination", loc);
  twin::Op op(twin::MTE2, loc, "DataCopyPad");
  for (uint32_t b = 0; b < p.blockCount; ++b) {
    op.ReadGm(s + uint64_t{b} * (p.blockLen + p.srcStride), p.blockLen);
    op.Write(d + uint64_t{b} * dstBlock, TwinCeil32(p.blockLen));
    std::memcpy(d + uint64_t{b} * dstBlock, s + uint64_t{b} * (p.blockLen + p.srcStride), p.blockLen);
    if (pad.isPad) {
      T* fill = reinterpret_cast<T*>(d + uint64_t{b} * dstBlock + p.blockLen);
      for (uint32_t i = 0; i < (TwinCeil32(p.blockLen) - p.blockLen) / sizeof(T); ++i) fill[i] = pad.paddingValue;
    }
  }
}

template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyParams& p,
                        const DataCopyPadParams& pad, TwinLoc loc = {}) {
  T value;
  std::memcpy(&value, &pad.paddingValue, sizeof(T));
  DataCopyPad(dst, src, DataCopyExtParams{p.blockCount, p.blockLen, p.srcStride, p.dstStride, 0},
              DataCopyPadExtParams<T>{pad.isPad, pad.leftPadding, pad.rightPadding, value}, loc);
}

// local -> GM: only blockLen bytes of each block reach global memory.
template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p, TwinLoc loc = {}) {
  const uint8_t* s = reinterpret_cast<const uint8_t*>(src.GetPhyAddr());
  uint8_t* d = reinterpret_cast<uint8_t*>(dst.GetPhyAddr());
  uint32_t srcBlock = TwinCeil32(p.blockLen) + p.srcStride * 32u;
  TwinCheckRangeAt(src, (uint64_t{srcBlock} * (p.blockCount ? p.blockCount - 1u : 0u) + p.blockLen) / sizeof(T),
                   "DataCopyPad local->GM", loc);
  twin::CheckLocalAlign(src.GetPhyAddr(), 32, "DataCopyPad source", loc);
  twin::Op op(twin::MTE3, loc, "DataCopyPad");
  for (uint32_t b = 0; b < p.blockCount; ++b) {
    op.Read(s + uint64_t{b} * srcBlock, p.blockLen);
    op.WriteGm(d + uint64_t{b} * (p.blockLen + p.dstStride), p.blockLen);
    twin::GmStore(reinterpret_cast<T*>(d + uint64_t{b} * (p.blockLen + p.dstStride)),
                  reinterpret_cast<const T*>(s + uint64_t{b} * srcBlock), p.blockLen / sizeof(T));
  }
}

template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyParams& p, TwinLoc loc = {}) {
  DataCopyPad(dst, src, DataCopyExtParams{p.blockCount, p.blockLen, p.srcStride, p.dstStride, 0}, loc);
}

}  // namespace AscendC
