// The C API's compares and asc_select (c_api/asc_compare.h) as a pointer-based kernel, 256 floats
// (four 64-lane repeats): lt = the bit mask of x < y (repeat form into UB); gt = the CMPMASK bits
// of x > y over the first repeat (register form, read back with asc_get_cmp_mask); z = those bits
// select x or y in every repeat (count form); w = the pattern loaded by asc_set_cmp_mask selects
// x or y (repeat form); ge0 = the bit mask of x >= 0.25 (asc_ge_scalar). Registered into
// kernels.cpp's table.
#include "acl/acl.h"
#include "kernel_operator.h"
#include "c_api/asc_simd.h"
#include "kernel_table.h"

extern "C" __global__ __vector__ void c_api_compare_select(GM_ADDR x, GM_ADDR y, GM_ADDR pattern, GM_ADDR lt,
                                                            GM_ADDR gt, GM_ADDR z, GM_ADDR w, GM_ADDR ge0) {
  constexpr uint32_t N = 256;
  asc_init();
  __ubuf__ float* xu = (__ubuf__ float*)asc_get_phy_buf_addr(0);
  __ubuf__ float* yu = (__ubuf__ float*)asc_get_phy_buf_addr(N * sizeof(float));
  __ubuf__ float* zu = (__ubuf__ float*)asc_get_phy_buf_addr(2 * N * sizeof(float));
  __ubuf__ float* wu = (__ubuf__ float*)asc_get_phy_buf_addr(3 * N * sizeof(float));
  __ubuf__ uint8_t* ltu = (__ubuf__ uint8_t*)asc_get_phy_buf_addr(4 * N * sizeof(float));
  __ubuf__ uint8_t* gtu = (__ubuf__ uint8_t*)asc_get_phy_buf_addr(4 * N * sizeof(float) + 32);
  __ubuf__ uint8_t* pu = (__ubuf__ uint8_t*)asc_get_phy_buf_addr(4 * N * sizeof(float) + 64);
  __ubuf__ uint8_t* geu = (__ubuf__ uint8_t*)asc_get_phy_buf_addr(4 * N * sizeof(float) + 96);
  asc_copy_gm2ub(xu, (__gm__ float*)x, N * sizeof(float));
  asc_copy_gm2ub(yu, (__gm__ float*)y, N * sizeof(float));
  asc_copy_gm2ub(pu, (__gm__ uint8_t*)pattern, 32);
  asc_sync_notify(PIPE_MTE2, PIPE_V, EVENT_ID0);
  asc_sync_wait(PIPE_MTE2, PIPE_V, EVENT_ID0);
  asc_lt(ltu, xu, yu, N / 64, 1, 1, 1, 8, 8, 8);
  asc_gt(xu, yu, 1, 1, 1, 1, 8, 8, 8);
  asc_get_cmp_mask(gtu);
  asc_select(zu, xu, yu, N);
  asc_set_cmp_mask(pu);
  asc_select(wu, xu, yu, N / 64, 1, 1, 1, 8, 8, 8);
  asc_ge_scalar(geu, xu, 0.25f, N / 64, 1, 1, 8, 8);
  asc_sync_notify(PIPE_V, PIPE_MTE3, EVENT_ID0);
  asc_sync_wait(PIPE_V, PIPE_MTE3, EVENT_ID0);
  asc_copy_ub2gm((__gm__ uint8_t*)lt, ltu, 32);
  asc_copy_ub2gm((__gm__ uint8_t*)gt, gtu, 32);
  asc_copy_ub2gm((__gm__ float*)z, zu, N * sizeof(float));
  asc_copy_ub2gm((__gm__ float*)w, wu, N * sizeof(float));
  asc_copy_ub2gm((__gm__ uint8_t*)ge0, geu, 32);
  asc_sync();
}

static const RegisterKernels kCompareKernels({
    {"c_api_compare_select", [](auto& a, uint32_t d, aclrtStream s) {
       c_api_compare_select<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
     }},
});
