// DataCopy / DataCopyPad between global and local memory (MTE2 / MTE3 in hardware).
#pragma once

#include <cstdint>
#include <cstring>

namespace AscendC {

// The MTEs move whole 32-byte blocks: an unaligned DataCopy silently moves the
// wrong bytes on hardware, so the twin refuses it (DataCopyPad is the tail path).
inline void TwinCheckAligned(uint64_t bytes, const char* op) {
  if (bytes % 32 != 0) {
    char msg[128];
    std::snprintf(msg, sizeof msg, "%s of %llu bytes is not a multiple of 32 (use DataCopyPad)", op,
                  static_cast<unsigned long long>(bytes));
    TwinFail(msg);
  }
}

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count) {
  TwinCheckAligned(uint64_t{count} * sizeof(T), "DataCopy GM->local");
  TwinCheckRange(dst, count, "DataCopy GM->local");
  std::memcpy(dst.GetPhyAddr(), src.GetPhyAddr(), uint64_t{count} * sizeof(T));
}

template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count) {
  TwinCheckAligned(uint64_t{count} * sizeof(T), "DataCopy local->GM");
  TwinCheckRange(src, count, "DataCopy local->GM");
  std::memcpy(dst.GetPhyAddr(), src.GetPhyAddr(), uint64_t{count} * sizeof(T));
}

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count) {
  TwinCheckAligned(uint64_t{count} * sizeof(T), "DataCopy local->local");
  TwinCheckRange(dst, count, "DataCopy local->local");
  std::memmove(dst.GetPhyAddr(), src.GetPhyAddr(), uint64_t{count} * sizeof(T));
}

// blockLen in bytes; GM-side strides in bytes, local-side strides in 32-byte blocks.
struct DataCopyExtParams {
  uint16_t blockCount = 1;
  uint32_t blockLen = 0;
  uint32_t srcStride = 0;
  uint32_t dstStride = 0;
  uint32_t rsv = 0;
};

template <typename T>
struct DataCopyPadExtParams {
  bool isPad = false;
  uint8_t leftPadding = 0;
  uint8_t rightPadding = 0;
  T paddingValue = T(0);
};

inline uint32_t TwinCeil32(uint32_t bytes) { return (bytes + 31u) / 32u * 32u; }

// GM -> local: each block lands at a 32-byte boundary in local memory; the gap
// up to it is filled with paddingValue when isPad (so a reduction can read it).
template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                        const DataCopyPadExtParams<T>& pad) {
  const uint8_t* s = reinterpret_cast<const uint8_t*>(src.GetPhyAddr());
  uint8_t* d = reinterpret_cast<uint8_t*>(dst.GetPhyAddr());
  uint32_t dstBlock = TwinCeil32(p.blockLen) + p.dstStride * 32u;
  TwinCheckRange(dst, uint64_t{dstBlock} * p.blockCount / sizeof(T), "DataCopyPad GM->local");
  for (uint32_t b = 0; b < p.blockCount; ++b) {
    std::memcpy(d + uint64_t{b} * dstBlock, s + uint64_t{b} * (p.blockLen + p.srcStride), p.blockLen);
    if (pad.isPad) {
      T* fill = reinterpret_cast<T*>(d + uint64_t{b} * dstBlock + p.blockLen);
      for (uint32_t i = 0; i < (TwinCeil32(p.blockLen) - p.blockLen) / sizeof(T); ++i) fill[i] = pad.paddingValue;
    }
  }
}

// local -> GM: only blockLen bytes of each block reach global memory.
template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const DataCopyExtParams& p) {
  const uint8_t* s = reinterpret_cast<const uint8_t*>(src.GetPhyAddr());
  uint8_t* d = reinterpret_cast<uint8_t*>(dst.GetPhyAddr());
  uint32_t srcBlock = TwinCeil32(p.blockLen) + p.srcStride * 32u;
  TwinCheckRange(src, uint64_t{srcBlock} * (p.blockCount - 1) / sizeof(T) + p.blockLen / sizeof(T),
                 "DataCopyPad local->GM");
  for (uint32_t b = 0; b < p.blockCount; ++b)
    std::memcpy(d + uint64_t{b} * (p.blockLen + p.dstStride), s + uint64_t{b} * srcBlock, p.blockLen);
}

}  // namespace AscendC
