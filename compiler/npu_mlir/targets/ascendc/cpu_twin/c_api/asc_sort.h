// Sorting in AscendC's C API on the CPU twin (asc-devkit vector_compute, npu_arch 2201), on PIPE_V:
// asc_bitsort (32 scores per repeat into descending (score, index) proposals) and asc_mrgsort4
// (up to 4 descending proposal queues merged into one), with _sync forms, and asc_get_vms4_sr
// (the proposals each queue gave the last asc_mrgsort4). The class API's Sort32 / MrgSort
// underneath (twin/sort.h), with the same proposal layout and tie order.
#pragma once

#include <cstdint>

#include "kernel_operator.h"

constexpr uint32_t ASC_C_API_MRGSORT_ELEMENT_LEN = 4;

template <typename T>
__aicore__ inline void asc_bitsort(__ubuf__ T* dst, __ubuf__ T* src0, __ubuf__ uint32_t* src1, int32_t repeat,
                                   AscendC::TwinLoc loc = {}) {
  auto d = AscendC::twin::UbTensor(reinterpret_cast<uint8_t*>(dst), "asc_bitsort", loc);
  auto s = AscendC::twin::UbTensor(src0, "asc_bitsort", loc);
  auto i = AscendC::twin::UbTensor(src1, "asc_bitsort", loc);
  AscendC::twin::Sort32Body(reinterpret_cast<uint8_t*>(dst), src0, src1, repeat, d.GetSize(), s.GetSize(), i.GetSize(),
                            "asc_bitsort", loc);
}
template <typename T>
__aicore__ inline void asc_bitsort_sync(__ubuf__ T* dst, __ubuf__ T* src0, __ubuf__ uint32_t* src1, int32_t repeat,
                                        AscendC::TwinLoc loc = {}) {
  asc_bitsort(dst, src0, src1, repeat, loc);
  AscendC::twin::BarrierAll();
}

template <typename T>
__aicore__ inline void asc_mrgsort4(__ubuf__ T* dst, __ubuf__ T* src[ASC_C_API_MRGSORT_ELEMENT_LEN], uint8_t repeat,
                                    uint16_t element_length_0, uint16_t element_length_1, uint16_t element_length_2,
                                    uint16_t element_length_3, bool if_exhausted_suspension, uint8_t valid_bit,
                                    AscendC::TwinLoc loc = {}) {
  const uint16_t lengths[ASC_C_API_MRGSORT_ELEMENT_LEN] = {element_length_0, element_length_1, element_length_2,
                                                           element_length_3};
  const uint8_t* from[ASC_C_API_MRGSORT_ELEMENT_LEN] = {};
  uint64_t total = 0;
  for (uint32_t q = 0; q < ASC_C_API_MRGSORT_ELEMENT_LEN; ++q) {
    if (!(valid_bit >> q & 1u)) continue;
    from[q] = reinterpret_cast<const uint8_t*>(src[q]);
    auto t = AscendC::twin::UbTensor(reinterpret_cast<uint8_t*>(src[q]), "asc_mrgsort4", loc);
    AscendC::TwinCheckRangeAt(t, (repeat > 1 && q == 0 ? 4u * repeat : 1u) * uint64_t{lengths[q]} * 8u,
                              "asc_mrgsort4 source queue", loc);
    total += lengths[q];
  }
  auto d = AscendC::twin::UbTensor(reinterpret_cast<uint8_t*>(dst), "asc_mrgsort4", loc);
  AscendC::TwinCheckRangeAt(d, total * (repeat > 1 ? repeat : 1u) * 8u, "asc_mrgsort4 destination", loc);
  AscendC::twin::MrgSortBody<T>(reinterpret_cast<uint8_t*>(dst), from, repeat, lengths, if_exhausted_suspension,
                                valid_bit, "asc_mrgsort4", loc);
}
template <typename T>
__aicore__ inline void asc_mrgsort4_sync(__ubuf__ T* dst, __ubuf__ T* src[ASC_C_API_MRGSORT_ELEMENT_LEN],
                                         uint8_t repeat, uint16_t element_length_0, uint16_t element_length_1,
                                         uint16_t element_length_2, uint16_t element_length_3,
                                         bool if_exhausted_suspension, uint8_t valid_bit, AscendC::TwinLoc loc = {}) {
  asc_mrgsort4(dst, src, repeat, element_length_0, element_length_1, element_length_2, element_length_3,
               if_exhausted_suspension, valid_bit, loc);
  AscendC::twin::BarrierAll();
}

__aicore__ inline void asc_get_vms4_sr(uint16_t sorted_num[ASC_C_API_MRGSORT_ELEMENT_LEN]) {
  for (uint32_t q = 0; q < ASC_C_API_MRGSORT_ELEMENT_LEN; ++q) sorted_num[q] = AscendC::twin::mrgSortConsumed[q];
}
