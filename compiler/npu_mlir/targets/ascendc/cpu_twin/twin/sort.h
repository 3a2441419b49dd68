// Sorting on the vector unit (PIPE_V): Sort32 and MrgSort over region proposals, per AscendC's
// documentation (and the C API's asc_bitsort / asc_mrgsort4, c_api/asc_sort.h).
//
// A region proposal is 8 bytes: (score, index) with the score in the low bytes and the uint32
// index in the high 4 (a half score leaves 2 reserved bytes between them). Sort32 sorts each
// repeat's 32 scores in descending order, carrying their indices, into 32 proposals (256 bytes);
// MrgSort merges up to 4 descending queues of proposals into one, descending. Equal scores keep
// their order (within a repeat, and queue 0 before queue 1 ... across queues).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

namespace AscendC {

constexpr int32_t MRG_SORT_ELEMENT_LEN = 4;

struct MrgSort4Info {
  MrgSort4Info() = default;
  MrgSort4Info(const uint16_t elementLengthsIn[MRG_SORT_ELEMENT_LEN], bool ifExhaustedSuspensionIn,
               uint16_t validBitIn, uint16_t repeatTimesIn)
      : ifExhaustedSuspension(ifExhaustedSuspensionIn), validBit(validBitIn),
        repeatTimes(static_cast<uint8_t>(repeatTimesIn)) {
    for (int32_t i = 0; i < MRG_SORT_ELEMENT_LEN; ++i) elementLengths[i] = elementLengthsIn[i];
  }
  uint16_t elementLengths[MRG_SORT_ELEMENT_LEN] = {0, 0, 0, 0};  // proposals in each queue
  bool ifExhaustedSuspension = false;  // stop when a queue runs out
  uint16_t validBit = 0;               // queues taking part: 3 (0-1), 7 (0-2), 15 (0-3)
  uint8_t repeatTimes = 1;
};

template <typename T>
struct MrgSortSrcList {
  MrgSortSrcList() = default;
  MrgSortSrcList(const LocalTensor<T>& src1In, const LocalTensor<T>& src2In, const LocalTensor<T>& src3In,
                 const LocalTensor<T>& src4In)
      : src1(src1In), src2(src2In), src3(src3In), src4(src4In) {}
  LocalTensor<T> src1, src2, src3, src4;
};

namespace twin {
constexpr uint32_t kProposalBytes = 8;

template <typename T>
constexpr bool kSortType = std::is_same_v<T, half> || std::is_same_v<T, float>;

template <typename T>
inline float ProposalScore(const uint8_t* p) {
  T s;
  std::memcpy(&s, p, sizeof s);
  return static_cast<float>(s);
}

// Proposals each MrgSort queue consumed last (GetMrgSortResult / asc_get_vms4_sr).
inline thread_local uint16_t mrgSortConsumed[MRG_SORT_ELEMENT_LEN] = {0, 0, 0, 0};

template <typename T>
inline void Sort32Body(uint8_t* dst, const T* scores, const uint32_t* indices, int32_t repeat, uint64_t dstBytes,
                       uint64_t scoreElems, uint64_t indexElems, const char* name, const TwinLoc& loc) {
  static_assert(kSortType<T>, "Sort32 sorts half or float scores");
  if (repeat < 0 || repeat > 255) TwinFailAt(loc, "Sort32 repeatTime must be in [0, 255]");
  const uint64_t n = uint64_t(repeat) * 32u;
  if (n > scoreElems || n > indexElems || n * kProposalBytes > dstBytes) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "%s of %d repeats addresses %llu elements past its tensors", name, repeat,
                  static_cast<unsigned long long>(n));
    TwinFailAt(loc, msg);
  }
  for (const void* p : {static_cast<const void*>(dst), static_cast<const void*>(scores), static_cast<const void*>(indices)})
    CheckLocalAlign(p, 32, name, loc);
  Op op(V, loc, name);
  op.Read(scores, n * sizeof(T));
  op.Read(indices, n * sizeof(uint32_t));
  op.Write(dst, n * kProposalBytes);
  for (uint64_t r = 0; r < uint64_t(repeat); ++r) {
    uint32_t order[32];
    std::iota(order, order + 32, 0u);
    const T* s = scores + r * 32;
    std::stable_sort(order, order + 32, [s](uint32_t a, uint32_t b) {
      return static_cast<float>(s[a]) > static_cast<float>(s[b]);
    });
    for (uint32_t i = 0; i < 32; ++i) {
      uint8_t* p = dst + (r * 32 + i) * kProposalBytes;
      std::memset(p, 0, kProposalBytes);
      std::memcpy(p, &s[order[i]], sizeof(T));
      std::memcpy(p + 4, &indices[r * 32 + order[i]], sizeof(uint32_t));
    }
  }
}

// Merges the valid queues of each repeat (queue q at src[q] + repeat r's offset) into dst.
template <typename T>
inline void MrgSortBody(uint8_t* dst, const uint8_t* const src[MRG_SORT_ELEMENT_LEN], uint32_t repeat,
                        const uint16_t lengths[MRG_SORT_ELEMENT_LEN], bool suspend, uint16_t validBit, const char* name,
                        const TwinLoc& loc) {
  static_assert(kSortType<T>, "MrgSort merges half or float proposals");
  uint32_t queues = 0;
  switch (validBit) {
    case 3: queues = 2; break;
    case 7: queues = 3; break;
    case 15: queues = 4; break;
    default: TwinFailAt(loc, "MrgSort validBit must be 3, 7 or 15 (the first 2, 3 or 4 queues)");
  }
  if (repeat == 0) return;
  if (repeat > 1) {
    if (validBit != 15 || suspend) TwinFailAt(loc, "MrgSort with repeatTimes > 1 needs validBit 15 and no suspension");
    for (uint32_t q = 1; q < 4; ++q)
      if (lengths[q] != lengths[0] || src[q] != src[0] + uint64_t{q} * lengths[0] * kProposalBytes)
        TwinFailAt(loc, "MrgSort with repeatTimes > 1 needs 4 equal queues stored one after the other");
  }
  CheckLocalAlign(dst, 32, name, loc);
  uint64_t total = 0;
  for (uint32_t q = 0; q < queues; ++q) {
    CheckLocalAlign(src[q], 32, name, loc);
    total += lengths[q];
  }
  Op op(V, loc, name);
  for (uint32_t r = 0; r < repeat; ++r) {
    const uint64_t step = uint64_t{r} * 4u * lengths[0] * kProposalBytes;  // repeats only come with 4 equal queues
    for (uint32_t q = 0; q < queues; ++q) op.Read(src[q] + step, uint64_t{lengths[q]} * kProposalBytes);
    op.Write(dst + uint64_t{r} * total * kProposalBytes, total * kProposalBytes);
  }
  for (uint32_t r = 0; r < repeat; ++r) {
    const uint64_t step = uint64_t{r} * 4u * lengths[0] * kProposalBytes;
    std::vector<uint8_t> out;
    out.reserve(total * kProposalBytes);
    uint32_t at[MRG_SORT_ELEMENT_LEN] = {0, 0, 0, 0};
    for (;;) {
      int32_t best = -1;
      bool exhausted = false;
      for (uint32_t q = 0; q < queues; ++q) {
        if (at[q] == lengths[q]) {
          exhausted = true;
          continue;
        }
        if (best < 0 || ProposalScore<T>(src[q] + step + uint64_t{at[q]} * kProposalBytes) >
                            ProposalScore<T>(src[best] + step + uint64_t{at[best]} * kProposalBytes))
          best = static_cast<int32_t>(q);
      }
      if (best < 0 || (suspend && exhausted)) break;
      const uint8_t* p = src[best] + step + uint64_t{at[best]++} * kProposalBytes;
      out.insert(out.end(), p, p + kProposalBytes);
    }
    std::memcpy(dst + uint64_t{r} * total * kProposalBytes, out.data(), out.size());
    for (uint32_t q = 0; q < MRG_SORT_ELEMENT_LEN; ++q) mrgSortConsumed[q] = q < queues ? static_cast<uint16_t>(at[q]) : 0;
  }
}
}  // namespace twin

// dst: repeatTime * 32 proposals (repeatTime * 64 elements of T).
template <typename T>
inline void Sort32(const LocalTensor<T>& dst, const LocalTensor<T>& src0, const LocalTensor<uint32_t>& src1,
                   const int32_t repeatTime, TwinLoc loc = {}) {
  twin::Sort32Body(reinterpret_cast<uint8_t*>(dst.GetPhyAddr()), src0.GetPhyAddr(), src1.GetPhyAddr(), repeatTime,
                   uint64_t{dst.GetSize()} * sizeof(T), src0.GetSize(), src1.GetSize(), "Sort32", loc);
}

template <typename T>
inline void MrgSort(const LocalTensor<T>& dst, const MrgSortSrcList<T>& src, const MrgSort4Info& params,
                    TwinLoc loc = {}) {
  const LocalTensor<T>* queues[MRG_SORT_ELEMENT_LEN] = {&src.src1, &src.src2, &src.src3, &src.src4};
  const uint8_t* from[MRG_SORT_ELEMENT_LEN] = {};
  const uint64_t repeats = std::max<uint32_t>(params.repeatTimes, 1u);
  uint64_t total = 0;
  for (int32_t q = 0; q < MRG_SORT_ELEMENT_LEN; ++q) {
    if (!(params.validBit >> q & 1u)) continue;
    from[q] = reinterpret_cast<const uint8_t*>(queues[q]->GetPhyAddr());
    total += params.elementLengths[q];
  }
  // One repeat reads each queue; more repeats read 4 equal queues laid end to end from src1.
  if (repeats == 1) {
    for (int32_t q = 0; q < MRG_SORT_ELEMENT_LEN; ++q)
      if (from[q]) TwinCheckRangeAt(*queues[q], uint64_t{params.elementLengths[q]} * twin::kProposalBytes / sizeof(T),
                                    "MrgSort source queue", loc);
  } else {
    TwinCheckRangeAt(src.src1, repeats * total * twin::kProposalBytes / sizeof(T), "MrgSort source queues", loc);
  }
  TwinCheckRangeAt(dst, total * repeats * twin::kProposalBytes / sizeof(T),
                   "MrgSort destination", loc);
  twin::MrgSortBody<T>(reinterpret_cast<uint8_t*>(dst.GetPhyAddr()), from, params.repeatTimes, params.elementLengths,
                       params.ifExhaustedSuspension, params.validBit, "MrgSort", loc);
}

// The proposals each queue gave the last MrgSort (meaningful with ifExhaustedSuspension).
inline void GetMrgSortResult(uint16_t& mrgSortList1, uint16_t& mrgSortList2, uint16_t& mrgSortList3,
                             uint16_t& mrgSortList4) {
  mrgSortList1 = twin::mrgSortConsumed[0];
  mrgSortList2 = twin::mrgSortConsumed[1];
  mrgSortList3 = twin::mrgSortConsumed[2];
  mrgSortList4 = twin::mrgSortConsumed[3];
}

}  // namespace AscendC
