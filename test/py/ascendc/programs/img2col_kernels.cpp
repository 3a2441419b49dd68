// img2col (Load3Dv2) beyond L0A, as AscendC authors write it for convolutions whose img2col matrix
// is the right operand: a 6 x 7 map of 32 channels (3 x 3, pad 1: 42 output positions), in L1 as
// [C1][H * W][C0] (DataCopy Nd2Nz of the [H * W][C] map).
//   conv_positions_as_n  Y[Co][Ho * Wo] = W[Co][K] * img2col^T: the map's img2col into L0B, each
//                        output position a column of B; the weight [Co][K] (FRACTAL_Z's k order) is A.
//   c_api_conv_positions_as_n  the same through the C API's 3D asc_copy_l12l0b.
//   conv_weight_grad     dW[Co][K] = dY[Co][Ho * Wo] * img2col: the img2col transposed into L0B
//                        (positions along K, padded from 42 to 48 with the pad value), dY is A.
//   conv_weight_grad_t   dW^T[K][Co] = img2col^T * dY^T: the img2col transposed into L0A (window
//                        columns along M, positions along K), dY^T [Ho * Wo][Co] is B.
//   conv_repeat_rows     Y[Ho * Wo][Co] through img2col into L0A 16 rows at a time by the repeat
//                        registers (SetLoadDataRepeat: 3 iterations along the height).
// Registered into kernels.cpp's table.
#include "acl/acl.h"
#include "kernel_operator.h"
#include "c_api/asc_simd.h"
#include "kernel_table.h"

using namespace AscendC;

namespace {
constexpr uint32_t FRAC = 256;  // half elements in a 512-byte fractal
constexpr uint16_t H = 6, W = 7, C = 32, CO = 32, K = C * 9, P = H * W, P16 = (P + 15) / 16 * 16;
constexpr uint16_t K1 = K / 16, P1 = P16 / 16, CO1 = CO / 16;

enum class Form { PositionsAsN, WeightGrad, WeightGradT, RepeatRows };

template <Form FORM>
class KernelImg2Col {
 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR a, GM_ADDR y) {
    xGm.SetGlobalBuffer((__gm__ half*)x);
    aGm.SetGlobalBuffer((__gm__ half*)a);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    pipe.InitBuffer(mapL1, H * W * C * sizeof(half));
    pipe.InitBuffer(otherL1, CO * K * sizeof(half));  // the weight, or dY padded to P16 columns
    pipe.InitBuffer(l0a, P16 * K * sizeof(half));
    pipe.InitBuffer(l0b, P16 * K * sizeof(half));
    pipe.InitBuffer(l0c, P16 * K * sizeof(float));
  }
  __aicore__ inline void Process() {
    LocalTensor<half> x1 = mapL1.Get<half>(), o1 = otherL1.Get<half>();
    LocalTensor<half> a2 = l0a.Get<half>(), b2 = l0b.Get<half>();
    LocalTensor<float> c1 = l0c.Get<float>();
    DataCopy(x1, xGm, Nd2NzParams(1, P, C, 0, C, P, 1, 0));  // [H * W][C] -> [C1][H * W][C0]
    uint8_t pads[PAD_SIZE] = {1, 1, 1, 1};
    if constexpr (FORM == Form::PositionsAsN) {
      DataCopy(o1, aGm, Nd2NzParams(1, CO, K, 0, K, CO, 1, 0));  // the weight [Co][K] -> NZ
      SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
      WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
      for (uint16_t mi = 0; mi < CO1; ++mi)
        LoadData(a2[mi * K1 * FRAC], o1, LoadData2DParams(mi, K1, CO1, 0, 0, false, 0));
      LoadData(b2, x1, LoadData3DParamsV2<half>(pads, H, W, C, K, P, 0, 0, 1, 1, 3, 3, 1, 1, false, false, half(0)));
      Multiply(c1, a2, b2, CO, P, K, P);
    } else if constexpr (FORM == Form::WeightGrad) {
      // dY's K padding (positions 42..47) is multiplied: zero it first (both on MTE2, in order).
      InitConstValue(o1, InitConstValueParams<half>(1, static_cast<uint16_t>(CO * P16 * sizeof(half) / 32), 0, half(0)));
      DataCopy(o1, aGm, Nd2NzParams(1, CO, P, 0, P, CO, 1, 0));  // dY [Co][P] -> NZ
      SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
      WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
      for (uint16_t mi = 0; mi < CO1; ++mi)
        LoadData(a2[mi * P1 * FRAC], o1, LoadData2DParams(mi, P1, CO1, 0, 0, false, 0));
      LoadData(b2, x1, LoadData3DParamsV2<half>(pads, H, W, C, K, P16, 0, 0, 1, 1, 3, 3, 1, 1, true, false, half(0)));
      Multiply(c1, a2, b2, CO, K, P16, K);
    } else if constexpr (FORM == Form::WeightGradT) {
      InitConstValue(o1, InitConstValueParams<half>(1, static_cast<uint16_t>(P16 * CO * sizeof(half) / 32), 0, half(0)));
      DataCopy(o1, aGm, Nd2NzParams(1, P, CO, 0, CO, P16, 1, 0));  // dY^T [P][Co] -> NZ, rows padded to 48
      SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
      WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
      LoadData(a2, x1, LoadData3DParamsV2<half>(pads, H, W, C, K, P16, 0, 0, 1, 1, 3, 3, 1, 1, true, false, half(0)));
      for (uint16_t ki = 0; ki < P1; ++ki)  // [P][Co] in NZ -> nZ: transpose each fractal
        LoadData(b2[ki * CO1 * FRAC], o1, LoadData2DParams(ki, CO1, P1, 0, 0, true, 0));
      Multiply(c1, a2, b2, K, CO, P16, CO);
    } else {
      DataCopy(o1, aGm, Nd2NzParams(1, K, CO, 0, CO, K, 1, 0));  // the weight [K][Co] -> NZ
      SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
      WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
      SetLoadDataRepeat(LoadDataRepeatParam(1, P1, 0));  // 16 rows per iteration, the next 16 rows after
      LoadData(a2, x1, LoadData3DParamsV2<half>(pads, H, W, C, K, 16, 0, 0, 1, 1, 3, 3, 1, 1, false, false, half(0)));
      SetLoadDataRepeat(LoadDataRepeatParam(0, 1, 0));
      for (uint16_t ki = 0; ki < K1; ++ki)  // [K][Co] in NZ -> nZ: transpose each fractal
        LoadData(b2[ki * CO1 * FRAC], o1, LoadData2DParams(ki, CO1, K1, 0, 0, true, 0));
      Multiply(c1, a2, b2, P, CO, K, CO);
    }
  }

 private:
  // C = A * B (m x k times k x n, both loaded), then Fixpipe to GM as m rows of n floats.
  __aicore__ inline void Multiply(const LocalTensor<float>& c1, const LocalTensor<half>& a2,
                                  const LocalTensor<half>& b2, uint16_t m, uint16_t n, uint16_t k, uint32_t dstStride) {
    SetFlag<HardEvent::MTE1_M>(EVENT_ID0);
    WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
    Mmad(c1, a2, b2, MmadParams(m, n, k, 0, false, true));
    SetFlag<HardEvent::M_FIX>(EVENT_ID0);
    WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
    Fixpipe(yGm, c1, FixpipeParamsV220(n, m, static_cast<uint16_t>((m + 15) / 16 * 16), dstStride, false));
  }

  TPipe pipe;
  TBuf<TPosition::A1> mapL1;
  TBuf<TPosition::B1> otherL1;
  TBuf<TPosition::A2> l0a;
  TBuf<TPosition::B2> l0b;
  TBuf<TPosition::CO1> l0c;
  GlobalTensor<half> xGm, aGm;
  GlobalTensor<float> yGm;
};

__aicore__ inline void CApiConvPositionsAsN(GM_ADDR x, GM_ADDR w, GM_ADDR y) {
  asc_init();
  __cbuf__ half x_l1[H * W * C], w_l1[CO * K];
  __ca__ half a_l0[CO * K];
  __cb__ half b_l0[P16 * K];
  __cc__ float c_l0[CO * P16];
  asc_copy_gm2l1_nd2nz(x_l1, (__gm__ half*)x, 1, P, C, 0, C, P, 1, 0);
  asc_copy_gm2l1_nd2nz(w_l1, (__gm__ half*)w, 1, CO, K, 0, K, CO, 1, 0);
  asc_sync_notify(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
  asc_sync_wait(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
  for (uint16_t mi = 0; mi < CO1; ++mi) asc_copy_l12l0a(a_l0 + mi * K1 * FRAC, w_l1, mi, K1, CO1, 0);
  asc_set_l13d_fmatrix(W, H, 1, 1, 1, 1);
  asc_set_l13d_padding(uint64_t{0});
  asc_copy_l12l0b(b_l0, x_l1, K, P, 0, 0, 1, 1, 3, 3, 1, 1, false, false, false, false, C);
  asc_sync_notify(PIPE_MTE1, PIPE_M, EVENT_ID0);
  asc_sync_wait(PIPE_MTE1, PIPE_M, EVENT_ID0);
  asc_mmad(c_l0, a_l0, b_l0, CO, K, P, 0, false, false, true);
  asc_sync_notify(PIPE_M, PIPE_FIX, EVENT_ID0);
  asc_sync_wait(PIPE_M, PIPE_FIX, EVENT_ID0);
  asc_set_l0c_copy_params(1, 0, 0);
  asc_copy_l0c2gm((__gm__ float*)y, c_l0, P, CO, P, CO, 0, static_cast<uint64_t>(QuantMode_t::NoQuant), 0, false, true);
  asc_sync();
}
}  // namespace

extern "C" __global__ __cube__ void conv_positions_as_n(GM_ADDR x, GM_ADDR w, GM_ADDR y) {
  KernelImg2Col<Form::PositionsAsN> op;
  op.Init(x, w, y);
  op.Process();
}
extern "C" __global__ __cube__ void conv_weight_grad(GM_ADDR x, GM_ADDR dy, GM_ADDR dw) {
  KernelImg2Col<Form::WeightGrad> op;
  op.Init(x, dy, dw);
  op.Process();
}
extern "C" __global__ __cube__ void conv_weight_grad_t(GM_ADDR x, GM_ADDR dyt, GM_ADDR dwt) {
  KernelImg2Col<Form::WeightGradT> op;
  op.Init(x, dyt, dwt);
  op.Process();
}
extern "C" __global__ __cube__ void conv_repeat_rows(GM_ADDR x, GM_ADDR w, GM_ADDR y) {
  KernelImg2Col<Form::RepeatRows> op;
  op.Init(x, w, y);
  op.Process();
}
extern "C" __global__ __cube__ void c_api_conv_positions_as_n(GM_ADDR x, GM_ADDR w, GM_ADDR y) {
  CApiConvPositionsAsN(x, w, y);
}

static const RegisterKernels kImg2ColKernels({
    {"conv_positions_as_n",
     [](auto& a, uint32_t d, aclrtStream s) { conv_positions_as_n<<<d, nullptr, s>>>(a[0], a[1], a[2]); }},
    {"conv_weight_grad", [](auto& a, uint32_t d, aclrtStream s) { conv_weight_grad<<<d, nullptr, s>>>(a[0], a[1], a[2]); }},
    {"conv_weight_grad_t",
     [](auto& a, uint32_t d, aclrtStream s) { conv_weight_grad_t<<<d, nullptr, s>>>(a[0], a[1], a[2]); }},
    {"conv_repeat_rows", [](auto& a, uint32_t d, aclrtStream s) { conv_repeat_rows<<<d, nullptr, s>>>(a[0], a[1], a[2]); }},
    {"c_api_conv_positions_as_n",
     [](auto& a, uint32_t d, aclrtStream s) { c_api_conv_positions_as_n<<<d, nullptr, s>>>(a[0], a[1], a[2]); }},
});
