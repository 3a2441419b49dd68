// Convolutions on the cube as AscendC authors write them: the feature map into L1 as
// [C1][H * W][C0] (DataCopy Nd2Nz of the [H * W][C] map), img2col into L0A (LoadData with
// LoadData3DParamsV2, or the C API's 3D asc_copy_l12l0a), the weight [K][Co] in FRACTAL_Z's k
// order (k = ((c1 * Kh + kh) * Kw + kw) * C0 + c0) into L0B through the transposing load, Mmad,
// Fixpipe to GM as [Ho * Wo][Co] floats. The bias variant starts C from the bias table (DataCopy
// L1 -> C2, Mmad with a bias); the strided one (stride 2, dilation 2, pad 2) splits k in halves
// by kStartPt and accumulates the second Mmad into L0C. The chained matmul keeps A * B on chip:
// Fixpipe from L0C to L1 (NZ, F322F16), which is the next Mmad's A (matmul_chain_no_flag forgets
// the FIX -> MTE1 flag between them). Also C-API matmuls whose A is filled in L1 by asc_fill_l1,
// and whose Fixpipe quantizes per channel from the fixpipe buffer, and a C-API matmul with a bias table.
// Registered into kernels.cpp's table.
#include "acl/acl.h"
#include "kernel_operator.h"
#include "c_api/asc_simd.h"
#include "kernel_table.h"

using namespace AscendC;

namespace {
constexpr uint32_t FRAC = 256;  // half elements in a 512-byte fractal

// How a convolution takes its bias: none, through the C2 queue, or copied into the bias table right
// before the Mmad with nothing ordering the two (the missing synchronization the twin reports).
enum class Bias { None, Queued, Unordered };

template <uint16_t H, uint16_t W, uint8_t STRIDE, uint8_t DILATION, uint8_t PAD, Bias BIAS, uint16_t K_PARTS>
class KernelConv {
  static constexpr uint16_t C = 32, N = 32, KH = 3, KW = 3, K = C * KH * KW, N1 = N / 16, K1 = K / 16;
  static constexpr uint16_t HO = (H + 2 * PAD - DILATION * (KH - 1) - 1) / STRIDE + 1;
  static constexpr uint16_t WO = (W + 2 * PAD - DILATION * (KW - 1) - 1) / STRIDE + 1;
  static constexpr uint16_t M = HO * WO, M1 = (M + 15) / 16, KP = K / K_PARTS, KP1 = KP / 16;

 public:
  __aicore__ inline void Init(GM_ADDR x, GM_ADDR w, GM_ADDR bias, GM_ADDR y) {
    xGm.SetGlobalBuffer((__gm__ half*)x);
    wGm.SetGlobalBuffer((__gm__ half*)w);
    biasGm.SetGlobalBuffer((__gm__ float*)bias);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    pipe.InitBuffer(inQueueA1, 1, H * W * C * sizeof(half));
    pipe.InitBuffer(inQueueB1, 1, K * N * sizeof(half));
    pipe.InitBuffer(inQueueA2, 1, M1 * 16 * KP * sizeof(half));
    pipe.InitBuffer(inQueueB2, 1, KP * N * sizeof(half));
    pipe.InitBuffer(outQueueCO1, 1, M1 * 16 * N * sizeof(float));
    if constexpr (BIAS != Bias::None) {
      pipe.InitBuffer(inQueueC1, 1, N * sizeof(float));
      pipe.InitBuffer(inQueueC2, 1, N * sizeof(float));
    }
  }
  __aicore__ inline void Process() {
    CopyIn();
    LocalTensor<half> a1 = inQueueA1.DeQue<half>();
    LocalTensor<half> b1 = inQueueB1.DeQue<half>();
    LocalTensor<float> c1 = outQueueCO1.AllocTensor<float>();
    LocalTensor<float> bt;
    if constexpr (BIAS == Bias::Queued) bt = LoadBias<true>();
    for (uint16_t part = 0; part < K_PARTS; ++part) {
      LocalTensor<half> a2 = inQueueA2.AllocTensor<half>();
      uint8_t pads[PAD_SIZE] = {PAD, PAD, PAD, PAD};
      LoadData(a2, a1, LoadData3DParamsV2<half>(pads, H, W, C, KP, M, part * KP, 0, STRIDE, STRIDE, KW, KH, DILATION,
                                                DILATION, false, false, half(0)));
      inQueueA2.EnQue(a2);
      LocalTensor<half> b2 = inQueueB2.AllocTensor<half>();
      for (uint16_t i = 0; i < KP1; ++i)  // [K][N] in NZ -> nZ: the k-fractal row of this part, transposed
        LoadData(b2[i * N1 * FRAC], b1, LoadData2DParams(part * KP1 + i, N1, K1, 0, 0, true, 0));
      inQueueB2.EnQue(b2);
      a2 = inQueueA2.DeQue<half>();
      b2 = inQueueB2.DeQue<half>();
      MmadParams p;
      p.m = M;
      p.n = N;
      p.k = KP;
      p.cmatrixInitVal = part == 0;
      if constexpr (BIAS == Bias::Unordered) {
        if (part == 0) bt = LoadBias<false>();
      }
      if (BIAS != Bias::None && part == 0) {
        Mmad(c1, a2, b2, bt, p);  // MMAD_WITH_BIAS
      } else {
        Mmad(c1, a2, b2, p);
      }
      inQueueA2.FreeTensor(a2);
      inQueueB2.FreeTensor(b2);
    }
    if constexpr (BIAS != Bias::None) inQueueC2.FreeTensor(bt);
    inQueueA1.FreeTensor(a1);
    inQueueB1.FreeTensor(b1);
    outQueueCO1.EnQue(c1);
    c1 = outQueueCO1.DeQue<float>();
    FixpipeParamsV220 f;
    f.nSize = N;
    f.mSize = M;
    f.srcStride = M1 * 16;
    f.dstStride = N;
    Fixpipe(yGm, c1, f);
    outQueueCO1.FreeTensor(c1);
  }

 private:
  __aicore__ inline void CopyIn() {
    LocalTensor<half> a1 = inQueueA1.AllocTensor<half>();
    LocalTensor<half> b1 = inQueueB1.AllocTensor<half>();
    DataCopy(a1, xGm, Nd2NzParams(1, H * W, C, 0, C, H * W, 1, 0));  // [H * W][C] -> [C1][H * W][C0]
    DataCopy(b1, wGm, Nd2NzParams(1, K, N, 0, N, K, 1, 0));
    inQueueA1.EnQue(a1);
    inQueueB1.EnQue(b1);
  }
  template <bool QUEUED>
  __aicore__ inline LocalTensor<float> LoadBias() {
    LocalTensor<float> l1 = inQueueC1.AllocTensor<float>();
    DataCopy(l1, biasGm, N);
    inQueueC1.EnQue(l1);
    l1 = inQueueC1.DeQue<float>();
    LocalTensor<float> bt = inQueueC2.AllocTensor<float>();
    DataCopy(bt, l1, DataCopyParams(1, N * sizeof(float) / 64, 0, 0));  // blockLen in 64-byte units on a 910B
    inQueueC1.FreeTensor(l1);
    if constexpr (!QUEUED) return bt;
    inQueueC2.EnQue(bt);
    return inQueueC2.DeQue<float>();
  }

  TPipe pipe;
  TQue<QuePosition::A1, 1> inQueueA1;
  TQue<QuePosition::B1, 1> inQueueB1;
  TQue<QuePosition::C1, 1> inQueueC1;
  TQue<QuePosition::A2, 1> inQueueA2;
  TQue<QuePosition::B2, 1> inQueueB2;
  TQue<QuePosition::C2, 1> inQueueC2;
  TQue<QuePosition::CO1, 1> outQueueCO1;
  GlobalTensor<half> xGm, wGm;
  GlobalTensor<float> biasGm, yGm;
};

// A 6 x W convolution (3 x 3, pad 1) through the C API: the feature map registers
// (asc_set_l13d_fmatrix / asc_set_l13d_padding), then one 3D asc_copy_l12l0a. C = 32 channels reach
// L1 as [C1][H * W][C0] (Nd2Nz); C = 4 (a first layer's padded RGB) as they are, [H][W][4], the
// img2col columns (kh, kw, c) padded from 36 to 48 and the weight's extra rows zero (W = 8 there:
// the map's copy is whole 32-byte blocks).
template <uint16_t C, uint16_t W>
__aicore__ inline void CApiConv(GM_ADDR x, GM_ADDR w, GM_ADDR y) {
  constexpr uint16_t H = 6, N = 32, K = (C * 9 + 15) / 16 * 16, M = H * W, M1 = (M + 15) / 16, N1 = N / 16;
  constexpr uint16_t K1 = K / 16;
  asc_init();
  __cbuf__ half x_l1[H * W * C], w_l1[K * N];
  __ca__ half a_l0[M1 * 16 * K];
  __cb__ half b_l0[K * N];
  __cc__ float c_l0[M1 * 16 * N];
  if constexpr (C % 16 == 0) {
    asc_copy_gm2l1_nd2nz(x_l1, (__gm__ half*)x, 1, H * W, C, 0, C, H * W, 1, 0);
  } else {
    asc_copy_gm2l1(x_l1, (__gm__ half*)x, H * W * C * sizeof(half));
  }
  asc_copy_gm2l1_nd2nz(w_l1, (__gm__ half*)w, 1, K, N, 0, N, K, 1, 0);
  asc_sync_notify(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
  asc_sync_wait(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
  asc_set_l13d_fmatrix(W, H, 1, 1, 1, 1);
  asc_set_l13d_padding(uint64_t{0});
  asc_copy_l12l0a(a_l0, x_l1, K, M, 0, 0, 1, 1, 3, 3, 1, 1, false, false, false, false, C);
  for (uint16_t ki = 0; ki < K1; ++ki) asc_copy_l12l0b_trans(b_l0 + ki * N1 * FRAC, w_l1, ki, N1, K1, 0, false, 0);
  asc_sync_notify(PIPE_MTE1, PIPE_M, EVENT_ID0);
  asc_sync_wait(PIPE_MTE1, PIPE_M, EVENT_ID0);
  asc_mmad(c_l0, a_l0, b_l0, M, K, N, 0, false, false, true);
  asc_sync_notify(PIPE_M, PIPE_FIX, EVENT_ID0);
  asc_sync_wait(PIPE_M, PIPE_FIX, EVENT_ID0);
  asc_set_l0c_copy_params(1, 0, 0);
  asc_copy_l0c2gm((__gm__ float*)y, c_l0, N, M, N, M1 * 16, 0, static_cast<uint64_t>(QuantMode_t::NoQuant), 0, false,
                  true);
  asc_sync();
}
// D[32][32] = (A * B) * E, halves in, floats out: P = A * B goes L0C -> L1 as half NZ ([N1][M][16],
// the layout Nd2Nz gives an A) and from there into L0A like any A.
template <bool FORGET_FLAG>
class KernelMatmulChain {
  static constexpr uint16_t M = 32, K = 32, N = 32, M1 = M / 16, K1 = K / 16, N1 = N / 16;

 public:
  __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR e, GM_ADDR d) {
    aGm.SetGlobalBuffer((__gm__ half*)a);
    bGm.SetGlobalBuffer((__gm__ half*)b);
    eGm.SetGlobalBuffer((__gm__ half*)e);
    dGm.SetGlobalBuffer((__gm__ float*)d);
    pipe.InitBuffer(l1, 4 * M * K * sizeof(half));  // A, B, E, P
    pipe.InitBuffer(l0a, M * K * sizeof(half));
    pipe.InitBuffer(l0b, K * N * sizeof(half));
    pipe.InitBuffer(l0c, M * N * sizeof(float));
  }
  __aicore__ inline void Process() {
    LocalTensor<half> all = l1.Get<half>();
    LocalTensor<half> a1 = all, b1 = all[M * K], e1 = all[2 * M * K], p1 = all[3 * M * K];
    LocalTensor<half> a2 = l0a.Get<half>(), b2 = l0b.Get<half>();
    LocalTensor<float> c1 = l0c.Get<float>();
    DataCopy(a1, aGm, Nd2NzParams(1, M, K, 0, K, M, 1, 0));
    DataCopy(b1, bGm, Nd2NzParams(1, K, N, 0, N, K, 1, 0));
    DataCopy(e1, eGm, Nd2NzParams(1, K, N, 0, N, K, 1, 0));
    SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
    MatmulInto(c1, a2, b2, a1, b1);
    SetFlag<HardEvent::M_MTE1>(EVENT_ID0);  // L0A / L0B are reloaded: the first Mmad must have read them
    WaitFlag<HardEvent::M_MTE1>(EVENT_ID0);
    FixpipeParamsV220 f;  // P to L1 in NZ: 16-column groups of M rows, M * 16 halves (dstStride 32-byte blocks) apart
    f.nSize = N;
    f.mSize = M;
    f.srcStride = M;
    f.dstStride = M * 16 * sizeof(half) / 32;
    f.quantPre = QuantMode_t::F322F16;
    Fixpipe<half, float, CFG_NZ>(p1, c1, f);
    SetFlag<HardEvent::FIX_M>(EVENT_ID0);  // L0C is rewritten by the second Mmad: Fixpipe must have read it
    WaitFlag<HardEvent::FIX_M>(EVENT_ID0);
    if constexpr (!FORGET_FLAG) {
      SetFlag<HardEvent::FIX_MTE1>(EVENT_ID0);
      WaitFlag<HardEvent::FIX_MTE1>(EVENT_ID0);
    }
    MatmulInto(c1, a2, b2, p1, e1);
    f.dstStride = N;
    f.quantPre = QuantMode_t::NoQuant;
    Fixpipe(dGm, c1, f);
  }

 private:
  // C (L0C) = X * Y for X [M][K] and Y [K][N] in L1 as NZ.
  __aicore__ inline void MatmulInto(const LocalTensor<float>& c1, const LocalTensor<half>& a2,
                                    const LocalTensor<half>& b2, const LocalTensor<half>& x1,
                                    const LocalTensor<half>& y1) {
    for (uint16_t i = 0; i < M1; ++i) LoadData(a2[i * 16 * K], x1[i * FRAC], LoadData2DParams(0, K1, M1, 0, 0, false, 0));
    for (uint16_t i = 0; i < K1; ++i) LoadData(b2[i * N1 * FRAC], y1, LoadData2DParams(i, N1, K1, 0, 0, true, 0));
    SetFlag<HardEvent::MTE1_M>(EVENT_ID0);
    WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
    Mmad(c1, a2, b2, MmadParams(M, N, K, 0, false, true));
    SetFlag<HardEvent::M_FIX>(EVENT_ID0);
    WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
  }

  TPipe pipe;
  TBuf<TPosition::A1> l1;
  TBuf<TPosition::A2> l0a;
  TBuf<TPosition::B2> l0b;
  TBuf<TPosition::CO1> l0c;
  GlobalTensor<half> aGm, bGm, eGm;
  GlobalTensor<float> dGm;
};

// C[16][32] = A * B + A' * B with A [16][32] all 0.5 (asc_fill_l1 of A's L1 fractals, loaded into L0A),
// A' all 1 (asc_fill_l0a straight into L0A, 512-byte blocks) and B [32][32] from GM: every row of C is
// 1.5 times B's column sums.
__aicore__ inline void CApiFillMatmul(GM_ADDR b, GM_ADDR c) {
  constexpr uint16_t M = 16, K = 32, N = 32, K1 = K / 16, N1 = N / 16;
  asc_init();
  __cbuf__ half a_l1[M * K], b_l1[K * N];
  __ca__ half a_l0[M * K];
  __cb__ half b_l0[K * N];
  __cc__ float c_l0[M * N];
  asc_fill_value_config fill;
  fill.repeat = 1;
  fill.block_num = M * K * sizeof(half) / 32;
  asc_fill_l1(a_l1, half(0.5f), fill);
  asc_copy_gm2l1_nd2nz(b_l1, (__gm__ half*)b, 1, K, N, 0, N, K, 1, 0);
  asc_sync_notify(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
  asc_sync_wait(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
  asc_copy_l12l0a(a_l0, a_l1, 0, K1, 1, 0);
  for (uint16_t ki = 0; ki < K1; ++ki) asc_copy_l12l0b_trans(b_l0 + ki * N1 * FRAC, b_l1, ki, N1, K1, 0, false, 0);
  asc_sync_notify(PIPE_MTE1, PIPE_M, EVENT_ID0);
  asc_sync_wait(PIPE_MTE1, PIPE_M, EVENT_ID0);
  asc_mmad(c_l0, a_l0, b_l0, M, K, N, 0, false, false, true);
  asc_sync_notify(PIPE_M, PIPE_MTE1, EVENT_ID0);  // L0A is refilled: the first asc_mmad must have read it
  asc_sync_wait(PIPE_M, PIPE_MTE1, EVENT_ID0);
  asc_fill_value_config ones;
  ones.repeat = 1;
  ones.block_num = M * K * sizeof(half) / 512;
  asc_fill_l0a(a_l0, half(1.0f), ones);
  asc_sync_notify(PIPE_MTE1, PIPE_M, EVENT_ID0);
  asc_sync_wait(PIPE_MTE1, PIPE_M, EVENT_ID0);
  asc_mmad(c_l0, a_l0, b_l0, M, K, N, 0, false, false, false);
  asc_sync_notify(PIPE_M, PIPE_FIX, EVENT_ID0);
  asc_sync_wait(PIPE_M, PIPE_FIX, EVENT_ID0);
  asc_set_l0c_copy_params(1, 0, 0);
  asc_copy_l0c2gm((__gm__ float*)c, c_l0, N, M, N, M, 0, static_cast<uint64_t>(QuantMode_t::NoQuant), 0, false, true);
  asc_sync();
}
// C[16][32] = A * B + bias through the C API's bias table: the half bias L1 -> bias table widened to
// float (asc_copy_l12bt with conv_control), asc_mmad with c_matrix_source. ORDERED = false copies the
// bias after the MTE1 -> M flag, so the table is read with nothing ordering it after its write.
template <bool ORDERED>
__aicore__ inline void CApiMatmulBias(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c) {
  constexpr uint16_t M = 16, K = 32, N = 32, K1 = K / 16, N1 = N / 16;
  asc_init();
  __cbuf__ half a_l1[M * K], b_l1[K * N], bias_l1[N];
  __ca__ half a_l0[M * K];
  __cb__ half b_l0[K * N];
  __cc__ float c_l0[M * N];
  __biasbuf__ float bias_bt[N];
  asc_copy_gm2l1_nd2nz(a_l1, (__gm__ half*)a, 1, M, K, 0, K, M, 1, 0);
  asc_copy_gm2l1_nd2nz(b_l1, (__gm__ half*)b, 1, K, N, 0, N, K, 1, 0);
  asc_copy_gm2l1(bias_l1, (__gm__ half*)bias, N * sizeof(half));
  asc_sync_notify(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
  asc_sync_wait(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
  asc_copy_l12l0a(a_l0, a_l1, 0, K1, 1, 0);
  for (uint16_t ki = 0; ki < K1; ++ki) asc_copy_l12l0b_trans(b_l0 + ki * N1 * FRAC, b_l1, ki, N1, K1, 0, false, 0);
  const uint64_t table = reinterpret_cast<uint64_t>(bias_bt);
  if constexpr (ORDERED) asc_copy_l12bt(table, bias_l1, 1, 1, N * sizeof(float) / 64, 0, 0);
  asc_sync_notify(PIPE_MTE1, PIPE_M, EVENT_ID0);
  asc_sync_wait(PIPE_MTE1, PIPE_M, EVENT_ID0);
  if constexpr (!ORDERED) asc_copy_l12bt(table, bias_l1, 1, 1, N * sizeof(float) / 64, 0, 0);
  asc_mmad(c_l0, a_l0, b_l0, M, K, N, 0, false, true, false);  // C_API_MMAD_WITH_BIAS
  asc_sync_notify(PIPE_M, PIPE_FIX, EVENT_ID0);
  asc_sync_wait(PIPE_M, PIPE_FIX, EVENT_ID0);
  asc_set_l0c_copy_params(1, 0, 0);
  asc_copy_l0c2gm((__gm__ float*)c, c_l0, N, M, N, M, 0, static_cast<uint64_t>(QuantMode_t::NoQuant), 0, false, true);
  asc_sync();
}
// C[16][32] int8 = saturate(round(A * B * scale[n])): a half matmul whose Fixpipe quantizes per output
// column (VQF322B8_PRE), the scales L1 -> fixpipe buffer (asc_copy_l12fb) and pointed at by
// asc_set_l0c2gm_quant.
__aicore__ inline void CApiQuantMatmul(GM_ADDR a, GM_ADDR b, GM_ADDR scales, GM_ADDR c) {
  constexpr uint16_t M = 16, K = 32, N = 32, K1 = K / 16, N1 = N / 16;
  asc_init();
  __cbuf__ half a_l1[M * K], b_l1[K * N];
  __cbuf__ uint64_t scale_l1[N];
  __fbuf__ uint64_t scale_fb[N];
  __ca__ half a_l0[M * K];
  __cb__ half b_l0[K * N];
  __cc__ float c_l0[M * N];
  asc_copy_gm2l1_nd2nz(a_l1, (__gm__ half*)a, 1, M, K, 0, K, M, 1, 0);
  asc_copy_gm2l1_nd2nz(b_l1, (__gm__ half*)b, 1, K, N, 0, N, K, 1, 0);
  asc_copy_gm2l1(scale_l1, (__gm__ uint64_t*)scales, N * sizeof(uint64_t));
  asc_sync_notify(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
  asc_sync_wait(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
  asc_copy_l12l0a(a_l0, a_l1, 0, K1, 1, 0);
  for (uint16_t ki = 0; ki < K1; ++ki) asc_copy_l12l0b_trans(b_l0 + ki * N1 * FRAC, b_l1, ki, N1, K1, 0, false, 0);
  asc_sync_notify(PIPE_MTE1, PIPE_M, EVENT_ID0);
  asc_sync_wait(PIPE_MTE1, PIPE_M, EVENT_ID0);
  asc_mmad(c_l0, a_l0, b_l0, M, K, N, 0, false, false, true);
  asc_sync_notify(PIPE_MTE2, PIPE_FIX, EVENT_ID0);  // the scales reach L1 on MTE2 and leave it on FIX
  asc_sync_wait(PIPE_MTE2, PIPE_FIX, EVENT_ID0);
  asc_copy_l12fb(scale_fb, scale_l1, N * sizeof(uint64_t));
  asc_set_l0c2gm_quant(reinterpret_cast<uint64_t>(scale_fb));
  asc_sync_notify(PIPE_M, PIPE_FIX, EVENT_ID0);
  asc_sync_wait(PIPE_M, PIPE_FIX, EVENT_ID0);
  asc_set_l0c_copy_params(1, 0, 0);
  asc_copy_l0c2gm((__gm__ int8_t*)c, c_l0, N, M, N, M, 0, static_cast<uint64_t>(QuantMode_t::VQF322B8_PRE), 0, false,
                  true);
  asc_sync();
}
// D[32][32] = (A * B) * E through the C API: P = A * B leaves L0C for L1 as half NZ (asc_copy_l0c2l1,
// F322F16) and is the second asc_mmad's A.
__aicore__ inline void CApiMatmulChain(GM_ADDR a, GM_ADDR b, GM_ADDR e, GM_ADDR d) {
  constexpr uint16_t M = 32, K = 32, N = 32, M1 = M / 16, K1 = K / 16, N1 = N / 16;
  asc_init();
  __cbuf__ half a_l1[M * K], b_l1[K * N], e_l1[K * N], p_l1[M * N];
  __ca__ half a_l0[M * K];
  __cb__ half b_l0[K * N];
  __cc__ float c_l0[M * N];
  asc_copy_gm2l1_nd2nz(a_l1, (__gm__ half*)a, 1, M, K, 0, K, M, 1, 0);
  asc_copy_gm2l1_nd2nz(b_l1, (__gm__ half*)b, 1, K, N, 0, N, K, 1, 0);
  asc_copy_gm2l1_nd2nz(e_l1, (__gm__ half*)e, 1, K, N, 0, N, K, 1, 0);
  asc_sync_notify(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
  asc_sync_wait(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
  for (int pass = 0; pass < 2; ++pass) {
    __cbuf__ half* x = pass == 0 ? a_l1 : p_l1;
    __cbuf__ half* y = pass == 0 ? b_l1 : e_l1;
    for (uint16_t mi = 0; mi < M1; ++mi) asc_copy_l12l0a(a_l0 + mi * K1 * FRAC, x, mi, K1, M1, 0);
    for (uint16_t ki = 0; ki < K1; ++ki) asc_copy_l12l0b_trans(b_l0 + ki * N1 * FRAC, y, ki, N1, K1, 0, false, 0);
    asc_sync_notify(PIPE_MTE1, PIPE_M, EVENT_ID0);
    asc_sync_wait(PIPE_MTE1, PIPE_M, EVENT_ID0);
    asc_mmad(c_l0, a_l0, b_l0, M, K, N, 0, false, false, true);
    asc_sync_notify(PIPE_M, PIPE_FIX, EVENT_ID0);
    asc_sync_wait(PIPE_M, PIPE_FIX, EVENT_ID0);
    if (pass == 1) break;
    asc_sync_notify(PIPE_M, PIPE_MTE1, EVENT_ID0);  // L0A / L0B are reloaded
    asc_sync_wait(PIPE_M, PIPE_MTE1, EVENT_ID0);
    asc_copy_l0c2l1(p_l1, c_l0, N, M, M * 16, M, 0, static_cast<uint64_t>(QuantMode_t::F322F16), 0, false, false);
    asc_sync_notify(PIPE_FIX, PIPE_MTE1, EVENT_ID0);  // P is the next A
    asc_sync_wait(PIPE_FIX, PIPE_MTE1, EVENT_ID0);
    asc_sync_notify(PIPE_FIX, PIPE_M, EVENT_ID0);     // and L0C is rewritten
    asc_sync_wait(PIPE_FIX, PIPE_M, EVENT_ID0);
  }
  asc_set_l0c_copy_params(1, 0, 0);
  asc_copy_l0c2gm((__gm__ float*)d, c_l0, N, M, N, M, 0, static_cast<uint64_t>(QuantMode_t::NoQuant), 0, false, true);
  asc_sync();
}
}  // namespace

extern "C" __global__ __cube__ void conv_bias(GM_ADDR x, GM_ADDR w, GM_ADDR bias, GM_ADDR y) {
  KernelConv<6, 7, 1, 1, 1, Bias::Queued, 1> op;
  op.Init(x, w, bias, y);
  op.Process();
}
extern "C" __global__ __cube__ void conv_bias_unordered(GM_ADDR x, GM_ADDR w, GM_ADDR bias, GM_ADDR y) {
  KernelConv<6, 7, 1, 1, 1, Bias::Unordered, 1> op;
  op.Init(x, w, bias, y);
  op.Process();
}
extern "C" __global__ __cube__ void conv_strided(GM_ADDR x, GM_ADDR w, GM_ADDR bias, GM_ADDR y) {
  KernelConv<9, 9, 2, 2, 2, Bias::None, 2> op;
  op.Init(x, w, bias, y);
  op.Process();
}
extern "C" __global__ __cube__ void matmul_chain(GM_ADDR a, GM_ADDR b, GM_ADDR e, GM_ADDR d) {
  KernelMatmulChain<false> op;
  op.Init(a, b, e, d);
  op.Process();
}
extern "C" __global__ __cube__ void matmul_chain_no_flag(GM_ADDR a, GM_ADDR b, GM_ADDR e, GM_ADDR d) {
  KernelMatmulChain<true> op;
  op.Init(a, b, e, d);
  op.Process();
}
extern "C" __global__ __cube__ void c_api_conv(GM_ADDR x, GM_ADDR w, GM_ADDR y) { CApiConv<32, 7>(x, w, y); }
extern "C" __global__ __cube__ void c_api_conv_c4(GM_ADDR x, GM_ADDR w, GM_ADDR y) { CApiConv<4, 8>(x, w, y); }
extern "C" __global__ __cube__ void c_api_matmul_chain(GM_ADDR a, GM_ADDR b, GM_ADDR e, GM_ADDR d) {
  CApiMatmulChain(a, b, e, d);
}
extern "C" __global__ __cube__ void c_api_fill_matmul(GM_ADDR b, GM_ADDR c) { CApiFillMatmul(b, c); }
extern "C" __global__ __cube__ void c_api_matmul_bias(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c) {
  CApiMatmulBias<true>(a, b, bias, c);
}
extern "C" __global__ __cube__ void c_api_matmul_bias_unordered(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c) {
  CApiMatmulBias<false>(a, b, bias, c);
}
extern "C" __global__ __cube__ void c_api_quant_matmul(GM_ADDR a, GM_ADDR b, GM_ADDR scales, GM_ADDR c) {
  CApiQuantMatmul(a, b, scales, c);
}

static const RegisterKernels kConvKernels({
    {"conv_bias", [](auto& a, uint32_t d, aclrtStream s) { conv_bias<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3]); }},
    {"conv_bias_unordered",
     [](auto& a, uint32_t d, aclrtStream s) { conv_bias_unordered<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3]); }},
    {"conv_strided", [](auto& a, uint32_t d, aclrtStream s) { conv_strided<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3]); }},
    {"matmul_chain", [](auto& a, uint32_t d, aclrtStream s) { matmul_chain<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3]); }},
    {"matmul_chain_no_flag",
     [](auto& a, uint32_t d, aclrtStream s) { matmul_chain_no_flag<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3]); }},
    {"c_api_conv", [](auto& a, uint32_t d, aclrtStream s) { c_api_conv<<<d, nullptr, s>>>(a[0], a[1], a[2]); }},
    {"c_api_conv_c4", [](auto& a, uint32_t d, aclrtStream s) { c_api_conv_c4<<<d, nullptr, s>>>(a[0], a[1], a[2]); }},
    {"c_api_matmul_chain",
     [](auto& a, uint32_t d, aclrtStream s) { c_api_matmul_chain<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3]); }},
    {"c_api_quant_matmul",
     [](auto& a, uint32_t d, aclrtStream s) { c_api_quant_matmul<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3]); }},
    {"c_api_fill_matmul", [](auto& a, uint32_t d, aclrtStream s) { c_api_fill_matmul<<<d, nullptr, s>>>(a[0], a[1]); }},
    {"c_api_matmul_bias",
     [](auto& a, uint32_t d, aclrtStream s) { c_api_matmul_bias<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3]); }},
    {"c_api_matmul_bias_unordered",
     [](auto& a, uint32_t d, aclrtStream s) { c_api_matmul_bias_unordered<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3]); }},
});
