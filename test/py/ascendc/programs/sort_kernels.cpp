// Sorting as AscendC authors write it (twin/sort.h, c_api/asc_sort.h). sort_merge: 128 float scores
// with their uint32 indices, Sort32 over 4 repeats then MrgSort of the 4 sorted 32-proposal queues
// into one descending list; then a merge of queue 0 (32) with an 8-proposal queue 1 that stops when
// queue 1 runs out (ifExhaustedSuspension), its per-queue counts from GetMrgSortResult stored as
// floats. c_api_sort: the same over 64 half scores with asc_bitsort and asc_mrgsort4 (2 queues).
// Registered into kernels.cpp's table.
#include "acl/acl.h"
#include "kernel_operator.h"
#include "c_api/asc_simd.h"
#include "kernel_table.h"

using namespace AscendC;

extern "C" __global__ __vector__ void sort_merge(GM_ADDR x, GM_ADDR idx, GM_ADDR sorted, GM_ADDR partial,
                                                 GM_ADDR counts) {
  constexpr uint32_t N = 128;  // scores; a proposal is two floats
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, (N + N + 2 * N + 2 * N + 2 * 40) * sizeof(float));
  LocalTensor<float> all = buf.Get<float>();
  LocalTensor<float> scores = all, props = all[2 * N], merged = all[4 * N], part = all[6 * N];
  LocalTensor<uint32_t> indices = all[N].ReinterpretCast<uint32_t>();
  GlobalTensor<float> xGm, sortedGm, partialGm, countsGm;
  GlobalTensor<uint32_t> idxGm;
  xGm.SetGlobalBuffer((__gm__ float*)x);
  idxGm.SetGlobalBuffer((__gm__ uint32_t*)idx);
  sortedGm.SetGlobalBuffer((__gm__ float*)sorted);
  partialGm.SetGlobalBuffer((__gm__ float*)partial);
  countsGm.SetGlobalBuffer((__gm__ float*)counts);
  DataCopy(scores, xGm, N);
  DataCopy(indices, idxGm, N);
  SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
  Sort32(props, scores, indices, N / 32);
  const uint16_t four[MRG_SORT_ELEMENT_LEN] = {32, 32, 32, 32};
  MrgSort(merged, MrgSortSrcList<float>(props, props[64], props[128], props[192]), MrgSort4Info(four, false, 15, 1));
  const uint16_t two[MRG_SORT_ELEMENT_LEN] = {32, 8, 0, 0};
  MrgSort(part, MrgSortSrcList<float>(props, props[64], props, props), MrgSort4Info(two, true, 3, 1));
  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  DataCopy(sortedGm, merged, 2 * N);
  DataCopy(partialGm, part, 2 * 40);
  uint16_t c0, c1, c2, c3;
  GetMrgSortResult(c0, c1, c2, c3);
  countsGm.SetValue(0, float(c0));
  countsGm.SetValue(1, float(c1));
}

extern "C" __global__ __vector__ void c_api_sort(GM_ADDR x, GM_ADDR idx, GM_ADDR sorted) {
  constexpr uint32_t N = 64;  // half scores; a proposal is 8 bytes
  asc_init();
  __ubuf__ half* xu = (__ubuf__ half*)asc_get_phy_buf_addr(0);
  __ubuf__ uint32_t* iu = (__ubuf__ uint32_t*)asc_get_phy_buf_addr(N * sizeof(half));
  __ubuf__ half* pu = (__ubuf__ half*)asc_get_phy_buf_addr(N * (sizeof(half) + sizeof(uint32_t)));
  __ubuf__ half* su = (__ubuf__ half*)asc_get_phy_buf_addr(N * (sizeof(half) + sizeof(uint32_t)) + N * 8);
  asc_copy_gm2ub(xu, (__gm__ half*)x, N * sizeof(half));
  asc_copy_gm2ub(iu, (__gm__ uint32_t*)idx, N * sizeof(uint32_t));
  asc_sync_notify(PIPE_MTE2, PIPE_V, EVENT_ID0);
  asc_sync_wait(PIPE_MTE2, PIPE_V, EVENT_ID0);
  asc_bitsort(pu, xu, iu, N / 32);
  __ubuf__ half* queues[ASC_C_API_MRGSORT_ELEMENT_LEN] = {pu, pu + 32 * 4, pu, pu};  // 4 halves per proposal
  asc_mrgsort4(su, queues, 1, 32, 32, 0, 0, false, 3);
  asc_sync_notify(PIPE_V, PIPE_MTE3, EVENT_ID0);
  asc_sync_wait(PIPE_V, PIPE_MTE3, EVENT_ID0);
  asc_copy_ub2gm((__gm__ half*)sorted, su, N * 8);
  asc_sync();
}

static const RegisterKernels kSortKernels({
    {"sort_merge",
     [](auto& a, uint32_t d, aclrtStream s) { sort_merge<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3], a[4]); }},
    {"c_api_sort", [](auto& a, uint32_t d, aclrtStream s) { c_api_sort<<<d, nullptr, s>>>(a[0], a[1], a[2]); }},
});
