// AscendC kernels written as kernel authors write them, with one ACL host program that runs any
// of them (and those of the other sources that register into kernel_table.h): `kernels <name> <blockDim> in:<file>... out:<bytes>:<file>...` copies the inputs to
// device buffers, launches `name<<<blockDim, nullptr, stream>>>(buffers...)` and writes the
// outputs back. test_ascendc_kernels.py compares each with numpy.
#include "acl/acl.h"
#include "kernel_operator.h"
#include "lib/matmul_intf.h"
#include "c_api/asc_simd.h"
#include "kernel_table.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

using namespace AscendC;

// ---------------------------------------------------------------- vector: mask / repeat forms
// x, y: 256 floats (4 repeats of 64 lanes). Five results of 256, each pre-filled with -1.
extern "C" __global__ __aicore__ void vec_mask(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
  constexpr int32_t N = 256;
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> inX, inY;
  TQue<QuePosition::VECOUT, 1> out;
  GlobalTensor<float> xGm, yGm, zGm;
  xGm.SetGlobalBuffer((__gm__ float*)x, N);
  yGm.SetGlobalBuffer((__gm__ float*)y, N);
  zGm.SetGlobalBuffer((__gm__ float*)z, 5 * N);
  pipe.InitBuffer(inX, 1, N * sizeof(float));
  pipe.InitBuffer(inY, 1, N * sizeof(float));
  pipe.InitBuffer(out, 1, 5 * N * sizeof(float));

  LocalTensor<float> xl = inX.AllocTensor<float>();
  LocalTensor<float> yl = inY.AllocTensor<float>();
  DataCopy(xl, xGm, N);
  DataCopy(yl, yGm, N);
  inX.EnQue(xl);
  inY.EnQue(yl);
  xl = inX.DeQue<float>();
  yl = inY.DeQue<float>();
  LocalTensor<float> zl = out.AllocTensor<float>();
  Duplicate(zl, -1.0f, 5 * N);
  // (a) continuous mask: the first 40 lanes of each repeat.
  Add(zl, xl, yl, 40, 4, BinaryRepeatParams(1, 1, 1, 8, 8, 8));
  // (b) bit mask: the odd lanes.
  uint64_t odd[2] = {0xAAAAAAAAAAAAAAAAull, 0};
  Mul(zl[N], xl, yl, odd, 4, BinaryRepeatParams(1, 1, 1, 8, 8, 8));
  // (c) strided source: every other block of x, two repeats 16 blocks apart, packed in dst.
  Adds(zl[2 * N], xl, 100.0f, 64, 2, UnaryRepeatParams(1, 2, 8, 16));
  // (d) the mask register: the first 8 lanes of each repeat.
  SetVectorMask<float>(0, 0xFF);
  Exp<float, false>(zl[3 * N], xl, MASK_PLACEHOLDER, 4, UnaryRepeatParams());
  ResetMask();
  // (e) counter mode: 100 elements in all, whatever the repeat count says.
  SetMaskCount();
  SetVectorMask<float, MaskMode::COUNTER>(0, 100);
  Sub<float, false>(zl[4 * N], xl, yl, MASK_PLACEHOLDER, 1, BinaryRepeatParams());
  SetMaskNorm();
  ResetMask();
  out.EnQue(zl);
  inX.FreeTensor(xl);
  inY.FreeTensor(yl);
  zl = out.DeQue<float>();
  DataCopy(zGm, zl, 5 * N);
  out.FreeTensor(zl);
}

// ---------------------------------------------------------------- reductions, TBuf, scalar access
// x: 8 rows x 64 floats. stats (32 floats): [0] sum, [1] max, [2] argmax (uint32 bits),
// [3] min of the first 32 lanes of every row, [8..15] row sums, [16..23] sums of each row's first
// 50. rows (8 x 64): each row filled with its sum (BroadCast).
extern "C" __global__ __aicore__ void reduce_stats(GM_ADDR x, GM_ADDR stats, GM_ADDR rows) {
  constexpr int32_t R = 8, C = 64, N = R * C;
  TPipe pipe;
  TBuf<TPosition::VECCALC> xBuf, work, scal, rowSum, bcast;
  GlobalTensor<float> xGm, sGm, rGm;
  xGm.SetGlobalBuffer((__gm__ float*)x, N);
  sGm.SetGlobalBuffer((__gm__ float*)stats, 32);
  rGm.SetGlobalBuffer((__gm__ float*)rows, N);
  pipe.InitBuffer(xBuf, N * sizeof(float));
  pipe.InitBuffer(work, N * sizeof(float));
  pipe.InitBuffer(scal, 32 * sizeof(float));
  pipe.InitBuffer(rowSum, R * sizeof(float));
  pipe.InitBuffer(bcast, N * sizeof(float));
  LocalTensor<float> xl = xBuf.Get<float>();
  LocalTensor<float> wl = work.AllocTensor<float>();
  LocalTensor<float> sl = scal.Get<float>();
  LocalTensor<float> rs = rowSum.Get<float>();
  LocalTensor<float> bl = bcast.Get<float>();

  DataCopy(xl, xGm, N);
  SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
  Duplicate(sl, 0.0f, 32);
  ReduceSum(sl, xl, wl, N);
  ReduceMax(sl[8], xl, wl, N, true);
  ReduceMin(sl[16], xl, wl, 32, R, 8);
  WholeReduceSum(rs, xl, C, R, 1, 1, 8);
  Sum(sl[24], xl, SumParams{R, C, 50});
  const uint32_t dstShape[2] = {R, C}, srcShape[2] = {R, 1};
  BroadCast<float, 2, 1>(bl, rs, dstShape, srcShape);

  // Scalar reads of what the vector unit wrote, then scalar writes the MTE3 copy reads.
  SetFlag<HardEvent::V_S>(EVENT_ID0);
  WaitFlag<HardEvent::V_S>(EVENT_ID0);
  float mx = sl.GetValue(8), mn = sl.GetValue(16);
  float argmax = sl.GetValue(9);
  float partial[R];
  for (int32_t r = 0; r < R; ++r) partial[r] = sl.GetValue(24 + r);
  float sums[R];
  for (int32_t r = 0; r < R; ++r) sums[r] = rs.GetValue(r);
  sl.SetValue(1, mx);
  sl.SetValue(2, argmax);
  sl.SetValue(3, mn);
  for (int32_t r = 0; r < R; ++r) {
    sl.SetValue(8 + r, sums[r]);
    sl.SetValue(16 + r, partial[r]);
  }
  for (int32_t i = 24; i < 32; ++i) sl.SetValue(i, 0.0f);
  for (int32_t i = 4; i < 8; ++i) sl.SetValue(i, 0.0f);
  SetFlag<HardEvent::S_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::S_MTE3>(EVENT_ID0);
  DataCopy(sGm, sl, 32);
  SetFlag<HardEvent::V_MTE3>(EVENT_ID1);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID1);
  DataCopy(rGm, bl, N);
  work.FreeTensor(wl);
}

// ---------------------------------------------------------------- compare / select / gather
// x, y: 256 floats. z: [0, 256) relu(x) by CompareScalar + Select, [256, 512) min(x, y) by
// Compare + Select, [512, 640) the even elements of x by GatherMask, z[640] their count.
extern "C" __global__ __aicore__ void cmp_select(GM_ADDR x, GM_ADDR y, GM_ADDR z) {
  constexpr int32_t N = 256;
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> inX, inY;
  TQue<QuePosition::VECOUT, 1> out;
  TBuf<TPosition::VECCALC> maskBuf;
  GlobalTensor<float> xGm, yGm, zGm;
  xGm.SetGlobalBuffer((__gm__ float*)x, N);
  yGm.SetGlobalBuffer((__gm__ float*)y, N);
  zGm.SetGlobalBuffer((__gm__ float*)z, 648);
  pipe.InitBuffer(inX, 1, N * sizeof(float));
  pipe.InitBuffer(inY, 1, N * sizeof(float));
  pipe.InitBuffer(out, 1, 648 * sizeof(float));
  pipe.InitBuffer(maskBuf, N / 8);
  LocalTensor<float> xl = inX.AllocTensor<float>(), yl = inY.AllocTensor<float>();
  DataCopy(xl, xGm, N);
  DataCopy(yl, yGm, N);
  inX.EnQue(xl);
  inY.EnQue(yl);
  xl = inX.DeQue<float>();
  yl = inY.DeQue<float>();
  LocalTensor<float> zl = out.AllocTensor<float>();
  LocalTensor<uint8_t> mask = maskBuf.Get<uint8_t>();
  Compares(mask, xl, 0.0f, CMPMODE::GT, N);
  Select(zl, mask, xl, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, N);
  Compare(mask, xl, yl, CMPMODE::LT, N);
  Select(zl[N], mask, xl, yl, SELMODE::VSEL_TENSOR_TENSOR_MODE, N);
  uint64_t kept = 0;
  GatherMask(zl[2 * N], xl, 1, false, 0, GatherMaskParams(1, 4, 8, 0), kept);
  Duplicate(zl[640], 0.0f, 8);
  SetFlag<HardEvent::V_S>(EVENT_ID0);
  WaitFlag<HardEvent::V_S>(EVENT_ID0);
  zl.SetValue(640, static_cast<float>(kept));
  SetFlag<HardEvent::S_V>(EVENT_ID0);
  WaitFlag<HardEvent::S_V>(EVENT_ID0);
  out.EnQue(zl);
  inX.FreeTensor(xl);
  inY.FreeTensor(yl);
  zl = out.DeQue<float>();
  SetFlag<HardEvent::S_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::S_MTE3>(EVENT_ID0);
  DataCopy(zGm, zl, 648);
  out.FreeTensor(zl);
}

// ---------------------------------------------------------------- cube: basic-API matmul
// C[M, N] (fp32) = A[M, K] * B (fp16), B stored [K, N] (TRANS_B false) or [N, K] (true).
// FLIP loads a [K, N] B without the transpose - the bug the twin used to hide.
// SPLIT_ND writes C as two [M, N / 2] ND matrices one after the other (Fixpipe ndNum 2).
// NZ_OUT writes C in NZ (CFG_NZ): [N / 16][M][16].
template <bool TRANS_B, bool FLIP = false, bool SPLIT_ND = false, bool NZ_OUT = false>
class KernelMatmul {
  static constexpr int32_t M = 48, K = 64, N = 32;
  static constexpr int32_t M1 = M / 16, K1 = K / 16, N1 = N / 16, FRAC = 256;

 public:
  __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR c) {
    aGm.SetGlobalBuffer((__gm__ half*)a, M * K);
    bGm.SetGlobalBuffer((__gm__ half*)b, K * N);
    cGm.SetGlobalBuffer((__gm__ float*)c, M * N);
    pipe.InitBuffer(inQueueA1, 1, M * K * sizeof(half));
    pipe.InitBuffer(inQueueB1, 1, K * N * sizeof(half));
    pipe.InitBuffer(inQueueA2, 1, M * K * sizeof(half));
    pipe.InitBuffer(inQueueB2, 1, K * N * sizeof(half));
    pipe.InitBuffer(outQueueCO1, 1, M * N * sizeof(float));
  }
  __aicore__ inline void Process() {
    CopyIn();
    SplitA();
    SplitB();
    Compute();
    CopyOut();
  }

 private:
  __aicore__ inline void CopyIn() {
    LocalTensor<half> a1 = inQueueA1.AllocTensor<half>();
    LocalTensor<half> b1 = inQueueB1.AllocTensor<half>();
    Nd2NzParams pa;
    pa.ndNum = 1;
    pa.nValue = M;
    pa.dValue = K;
    pa.srcNdMatrixStride = 0;
    pa.srcDValue = K;
    pa.dstNzC0Stride = M;
    pa.dstNzNStride = 1;
    pa.dstNzMatrixStride = 0;
    DataCopy(a1, aGm, pa);
    if constexpr (TRANS_B) {
      DataCopy(b1, bGm, Nd2NzParams(1, N, K, 0, K, N, 1, 0));
    } else {
      DataCopy(b1, bGm, Nd2NzParams(1, K, N, 0, N, K, 1, 0));
    }
    inQueueA1.EnQue(a1);
    inQueueB1.EnQue(b1);
  }
  __aicore__ inline void SplitA() {
    LocalTensor<half> a1 = inQueueA1.DeQue<half>();
    LocalTensor<half> a2 = inQueueA2.AllocTensor<half>();
    for (int32_t i = 0; i < M1; ++i) {  // NZ -> zZ, a row of fractals at a time
      LoadData2DParams p;
      p.repeatTimes = K1;
      p.srcStride = M1;
      p.ifTranspose = false;
      LoadData(a2[i * 16 * K], a1[i * FRAC], p);
    }
    inQueueA2.EnQue(a2);
    inQueueA1.FreeTensor(a1);
  }
  __aicore__ inline void SplitB() {
    LocalTensor<half> b1 = inQueueB1.DeQue<half>();
    LocalTensor<half> b2 = inQueueB2.AllocTensor<half>();
    if constexpr (TRANS_B) {  // [N, K] in NZ is already L0B's nZ: a plain copy
      LoadData(b2, b1, LoadData2DParams(0, K1 * N1, 1, 0, 0, false, 0));
    } else {  // [K, N] in NZ -> nZ: every fractal transposed
      for (int32_t i = 0; i < K1; ++i) LoadData(b2[i * N1 * FRAC], b1, LoadData2DParams(i, N1, K1, 0, 0, !FLIP, 0));
    }
    inQueueB2.EnQue(b2);
    inQueueB1.FreeTensor(b1);
  }
  __aicore__ inline void Compute() {
    LocalTensor<half> a2 = inQueueA2.DeQue<half>();
    LocalTensor<half> b2 = inQueueB2.DeQue<half>();
    LocalTensor<float> c1 = outQueueCO1.AllocTensor<float>();
    MmadParams p;
    p.m = M;
    p.n = N;
    p.k = K;
    Mmad(c1, a2, b2, p);
    outQueueCO1.EnQue(c1);
    inQueueA2.FreeTensor(a2);
    inQueueB2.FreeTensor(b2);
  }
  __aicore__ inline void CopyOut() {
    LocalTensor<float> c1 = outQueueCO1.DeQue<float>();
    FixpipeParamsV220 p;
    p.nSize = SPLIT_ND ? N / 2 : N;
    p.mSize = M;
    p.srcStride = M;
    p.dstStride = SPLIT_ND ? N / 2 : N;
    p.ndNum = SPLIT_ND ? 2 : 1;
    p.srcNdStride = SPLIT_ND ? M1 * (N / 2 / 16) : 0;  // 1024-byte L0C fractals between the halves
    p.dstNdStride = SPLIT_ND ? M * N / 2 : 0;
    if constexpr (NZ_OUT) {
      p.dstStride = M * 16 * sizeof(float) / 32;  // 32-byte blocks between 16-column groups
      Fixpipe<float, float, CFG_NZ>(cGm, c1, p);
    } else {
      Fixpipe(cGm, c1, p);
    }
    outQueueCO1.FreeTensor(c1);
  }

  TPipe pipe;
  TQue<QuePosition::A1, 1> inQueueA1;
  TQue<QuePosition::B1, 1> inQueueB1;
  TQue<QuePosition::A2, 1> inQueueA2;
  TQue<QuePosition::B2, 1> inQueueB2;
  TQue<QuePosition::CO1, 1> outQueueCO1;
  GlobalTensor<half> aGm, bGm;
  GlobalTensor<float> cGm;
};

extern "C" __global__ __cube__ void matmul_nn(GM_ADDR a, GM_ADDR b, GM_ADDR c) {
  KernelMatmul<false> op;
  op.Init(a, b, c);
  op.Process();
}
extern "C" __global__ __cube__ void matmul_nt(GM_ADDR a, GM_ADDR b, GM_ADDR c) {
  KernelMatmul<true> op;
  op.Init(a, b, c);
  op.Process();
}
extern "C" __global__ __cube__ void matmul_split_nd(GM_ADDR a, GM_ADDR b, GM_ADDR c) {
  KernelMatmul<false, false, true> op;
  op.Init(a, b, c);
  op.Process();
}
extern "C" __global__ __cube__ void matmul_nz_out(GM_ADDR a, GM_ADDR b, GM_ADDR c) {
  KernelMatmul<false, false, false, true> op;
  op.Init(a, b, c);
  op.Process();
}
extern "C" __global__ __cube__ void matmul_nn_flipped(GM_ADDR a, GM_ADDR b, GM_ADDR c) {
  KernelMatmul<false, true> op;
  op.Init(a, b, c);
  op.Process();
}

// ---------------------------------------------------------------- mix: 1 cube + 2 vector cores
// out = relu(A * B) + bias: the AIC computes A * B into the GM workspace and signals; each of
// its two AIVs waits, then takes half of the rows through UB.
extern "C" __global__ __mix__(1, 2) void mix_matmul_relu(GM_ADDR a, GM_ADDR b, GM_ADDR ws, GM_ADDR out) {
  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
  constexpr int32_t M = 48, N = 32, HALF = M / 2;
  if ASCEND_IS_AIC {
    KernelMatmul<false> op;
    op.Init(a, b, ws);
    op.Process();
    CrossCoreSetFlag<2, PIPE_FIX>(0);
  }
  if ASCEND_IS_AIV {
    CrossCoreWaitFlag(0);
    TPipe pipe;
    TQue<QuePosition::VECIN, 1> in;
    TQue<QuePosition::VECOUT, 1> outQ;
    GlobalTensor<float> wsGm, outGm;
    const int32_t row0 = static_cast<int32_t>(GetSubBlockIdx()) * HALF;
    wsGm.SetGlobalBuffer((__gm__ float*)ws + row0 * N, HALF * N);
    outGm.SetGlobalBuffer((__gm__ float*)out + row0 * N, HALF * N);
    pipe.InitBuffer(in, 1, HALF * N * sizeof(float));
    pipe.InitBuffer(outQ, 1, HALF * N * sizeof(float));
    LocalTensor<float> x = in.AllocTensor<float>();
    DataCopy(x, wsGm, HALF * N);
    in.EnQue(x);
    x = in.DeQue<float>();
    LocalTensor<float> y = outQ.AllocTensor<float>();
    Relu(y, x, HALF * N);
    Adds(y, y, 0.5f, HALF * N);
    outQ.EnQue(y);
    in.FreeTensor(x);
    y = outQ.DeQue<float>();
    DataCopy(outGm, y, HALF * N);
    outQ.FreeTensor(y);
  }
}

// ---------------------------------------------------------------- atomics + SyncAll
// Each block adds the sum of its 64 elements into total[0] (SetAtomicAdd); after SyncAll block 0
// writes twice the total to total[8].
extern "C" __global__ __aicore__ void atomic_total(GM_ADDR x, GM_ADDR total) {
  InitSocState();
  TPipe pipe;
  TBuf<TPosition::VECCALC> xb, sb, wb;
  GlobalTensor<float> xGm, tGm;
  xGm.SetGlobalBuffer((__gm__ float*)x + 64 * GetBlockIdx(), 64);
  tGm.SetGlobalBuffer((__gm__ float*)total, 16);
  pipe.InitBuffer(xb, 64 * sizeof(float));
  pipe.InitBuffer(sb, 8 * sizeof(float));
  pipe.InitBuffer(wb, 64 * sizeof(float));
  LocalTensor<float> xl = xb.Get<float>(), sl = sb.Get<float>(), wl = wb.Get<float>();
  DataCopy(xl, xGm, 64);
  SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
  Duplicate(sl, 0.0f, 8);
  ReduceSum(sl, xl, wl, 64);
  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  SetAtomicAdd<float>();
  DataCopy(tGm, sl, 8);
  SetAtomicNone();
  SyncAll();
  if (GetBlockIdx() == 0) {
    DataCopy(sl, tGm, 8);
    SetFlag<HardEvent::MTE2_V>(EVENT_ID1);
    WaitFlag<HardEvent::MTE2_V>(EVENT_ID1);
    Muls(sl, sl, 2.0f, 8);
    SetFlag<HardEvent::V_MTE3>(EVENT_ID1);
    WaitFlag<HardEvent::V_MTE3>(EVENT_ID1);
    DataCopy(tGm[8], sl, 8);
  }
}

// ---------------------------------------------------------------- static tensors: no TPipe
// y = 3 * x over 64 floats per block, the buffers from LocalMemAllocator, ordered by flags alone.
extern "C" __global__ __aicore__ void static_scale(GM_ADDR x, GM_ADDR y) {
  LocalMemAllocator<Hardware::UB> ub;
  LocalTensor<float> in = ub.Alloc<float, 64>();
  LocalTensor<float> out = ub.Alloc<TPosition::VECOUT, float>(64);
  GlobalTensor<float> xGm, yGm;
  xGm.SetGlobalBuffer((__gm__ float*)x + 64 * GetBlockIdx(), 64);
  yGm.SetGlobalBuffer((__gm__ float*)y + 64 * GetBlockIdx(), 64);
  DataCopy(in, xGm, 64);
  SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
  Muls(out, in, 3.0f, 64);
  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  DataCopy(yGm, out, 64);
}

// ---------------------------------------------------------------- what the twin must refuse
// The vector unit reads a TBuf that MTE2 is still filling: no SetFlag/WaitFlag<MTE2_V>.
extern "C" __global__ __aicore__ void missing_sync(GM_ADDR x, GM_ADDR z) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  GlobalTensor<float> xGm, zGm;
  xGm.SetGlobalBuffer((__gm__ float*)x, 64);
  zGm.SetGlobalBuffer((__gm__ float*)z, 64);
  pipe.InitBuffer(buf, 64 * sizeof(float));
  LocalTensor<float> t = buf.Get<float>();
  DataCopy(t, xGm, 64);
  Muls(t, t, 2.0f, 64);  // MISSING_SYNC_LINE
  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  DataCopy(zGm, t, 64);
}

// The next tile's copy-in overwrites a buffer MTE3 may still be copying out: no MTE3_MTE2.
extern "C" __global__ __aicore__ void missing_war_sync(GM_ADDR x, GM_ADDR z) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  GlobalTensor<float> xGm, zGm;
  xGm.SetGlobalBuffer((__gm__ float*)x, 128);
  zGm.SetGlobalBuffer((__gm__ float*)z, 128);
  pipe.InitBuffer(buf, 64 * sizeof(float));
  LocalTensor<float> t = buf.Get<float>();
  for (int32_t i = 0; i < 2; ++i) {
    DataCopy(t, xGm[i * 64], 64);  // MISSING_WAR_LINE
    SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
    DataCopy(zGm[i * 64], t, 64);
  }
}

// The kernel reads back global memory its MTE3 copy may still be writing: no MTE3_MTE2.
extern "C" __global__ __aicore__ void missing_gm_sync(GM_ADDR x, GM_ADDR z) {
  TPipe pipe;
  TBuf<TPosition::VECCALC> a, b;
  GlobalTensor<float> xGm, zGm;
  xGm.SetGlobalBuffer((__gm__ float*)x, 64);
  zGm.SetGlobalBuffer((__gm__ float*)z, 64);
  pipe.InitBuffer(a, 64 * sizeof(float));
  pipe.InitBuffer(b, 64 * sizeof(float));
  LocalTensor<float> ta = a.Get<float>(), tb = b.Get<float>();
  DataCopy(ta, xGm, 64);
  SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
  DataCopy(zGm, ta, 64);
  DataCopy(tb, zGm, 64);  // MISSING_GM_LINE
}

// A WaitFlag no SetFlag answers: the core would wait forever.
extern "C" __global__ __aicore__ void unmatched_wait(GM_ADDR x) {
  (void)x;
  WaitFlag<HardEvent::MTE2_V>(EVENT_ID3);  // UNMATCHED_WAIT_LINE
}

extern "C" __global__ __aicore__ void assert_and_print(GM_ADDR x) {
  (void)x;
  AscendC::printf("block %d of %d\n", static_cast<int>(GetBlockIdx()), static_cast<int>(GetBlockNum()));
  SyncAll();  // both lines are out before block 1's assertion ends the process
  ascendc_assert(GetBlockIdx() < 1, "block %d has no work", static_cast<int>(GetBlockIdx()));
}


// ---------------------------------------------------------------- cube: int8 matmul, quantized Fixpipe
// C[M, N] = A[M, K] (int8) * B[K, N] (int8), int32 on L0C (C0 = 32: 16 x 32 fractals), B loaded into
// L0B by LoadDataWithTranspose (two 16 x 32 fractals per 32 x 32 square). Fixpipe writes C as int32
// (NoQuant), half (DEQF16, scale 1/64), half per channel (VDEQF16, scales from GM via L1, an MTE2 -> FIX flag) or int8
// (REQ8, scale 1/256); VDEQ_FB takes the per-channel scales the way CANN's examples do: L1 -> the
// fixpipe buffer (DataCopy into a C2PIPE2GM tensor) and SetFixPipeConfig, then a Fixpipe without
// a workspace.
enum class I8Out { S32, DEQ, VDEQ, VDEQ_FB, REQ };
template <I8Out OUT>
class KernelMatmulInt8 {
  static constexpr int32_t M = 32, K = 64, N = 32, C0 = 32;
  static constexpr int32_t M1 = M / 16, K1 = K / C0, N1 = N / 16, FRAC = 512;
  using CType = std::conditional_t<OUT == I8Out::S32, int32_t, std::conditional_t<OUT == I8Out::REQ, int8_t, half>>;

 public:
  __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR scales, GM_ADDR c) {
    aGm.SetGlobalBuffer((__gm__ int8_t*)a, M * K);
    bGm.SetGlobalBuffer((__gm__ int8_t*)b, K * N);
    scaleGm.SetGlobalBuffer((__gm__ uint64_t*)scales, N);
    cGm.SetGlobalBuffer((__gm__ CType*)c, M * N);
    pipe.InitBuffer(inQueueA1, 1, M * K);
    pipe.InitBuffer(inQueueB1, 1, K * N);
    pipe.InitBuffer(scaleBuf, N * sizeof(uint64_t));
    pipe.InitBuffer(inQueueA2, 1, M * K);
    pipe.InitBuffer(inQueueB2, 1, K * N);
    pipe.InitBuffer(outQueueCO1, 1, M * N * sizeof(int32_t));
  }
  __aicore__ inline void Process() {
    LocalTensor<int8_t> a1 = inQueueA1.AllocTensor<int8_t>();
    LocalTensor<int8_t> b1 = inQueueB1.AllocTensor<int8_t>();
    DataCopy(a1, aGm, Nd2NzParams(1, M, K, 0, K, M, 1, 0));
    DataCopy(b1, bGm, Nd2NzParams(1, K, N, 0, N, K, 1, 0));
    inQueueA1.EnQue(a1);
    inQueueB1.EnQue(b1);
    if constexpr (OUT == I8Out::VDEQ || OUT == I8Out::VDEQ_FB) {
      // An A1 queue orders MTE2 before MTE1; the scales are read by FIX, which needs its own flag.
      DataCopy(scaleBuf.Get<uint64_t>(), scaleGm, N);
      SetFlag<HardEvent::MTE2_FIX>(EVENT_ID0);
    }

    a1 = inQueueA1.DeQue<int8_t>();
    LocalTensor<int8_t> a2 = inQueueA2.AllocTensor<int8_t>();
    for (int32_t i = 0; i < M1; ++i) LoadData(a2[i * 16 * K], a1[i * FRAC], LoadData2DParams(0, K1, M1, 0, 0, false, 0));
    inQueueA2.EnQue(a2);
    inQueueA1.FreeTensor(a1);

    b1 = inQueueB1.DeQue<int8_t>();
    LocalTensor<int8_t> b2 = inQueueB2.AllocTensor<int8_t>();
    // Square (kb, column group g) of the NZ B is square index g * K1 + kb; its transpose is the
    // L0B fractals (kb, 2g) and (kb, 2g + 1), side by side.
    for (int32_t kb = 0; kb < K1; ++kb)
      LoadDataWithTranspose(b2[kb * N1 * FRAC], b1, LoadData2dTransposeParams(kb, N / C0, K1, 1, 0));
    inQueueB2.EnQue(b2);
    inQueueB1.FreeTensor(b1);

    a2 = inQueueA2.DeQue<int8_t>();
    b2 = inQueueB2.DeQue<int8_t>();
    LocalTensor<int32_t> c1 = outQueueCO1.AllocTensor<int32_t>();
    Mmad(c1, a2, b2, MmadParams(M, N, K, 0, false, true));
    outQueueCO1.EnQue(c1);
    inQueueA2.FreeTensor(a2);
    inQueueB2.FreeTensor(b2);

    c1 = outQueueCO1.DeQue<int32_t>();
    FixpipeParamsV220 p(N, M, M, N, false);
    if constexpr (OUT == I8Out::DEQ || OUT == I8Out::REQ) {
      float scale = OUT == I8Out::DEQ ? 1.0f / 64 : 1.0f / 256;
      p.quantPre = OUT == I8Out::DEQ ? QuantMode_t::DEQF16 : QuantMode_t::REQ8;
      p.deqScalar = static_cast<uint64_t>(*reinterpret_cast<int32_t*>(&scale));
    }
    if constexpr (OUT == I8Out::VDEQ) {
      p.quantPre = QuantMode_t::VDEQF16;
      WaitFlag<HardEvent::MTE2_FIX>(EVENT_ID0);
      Fixpipe(cGm, c1, scaleBuf.Get<uint64_t>(), p);
    } else if constexpr (OUT == I8Out::VDEQ_FB) {
      p.quantPre = QuantMode_t::VDEQF16;
      WaitFlag<HardEvent::MTE2_FIX>(EVENT_ID0);
      LocalTensor<uint64_t> fb(TPosition::C2PIPE2GM, 0, N);
      DataCopy(fb, scaleBuf.Get<uint64_t>(), DataCopyParams(1, N * sizeof(uint64_t) / 128, 0, 0));  // 128-byte units
      SetFixPipeConfig(fb);
      Fixpipe(cGm, c1, p);
    } else {
      Fixpipe(cGm, c1, p);
    }
    outQueueCO1.FreeTensor(c1);
  }

 private:
  TPipe pipe;
  TQue<QuePosition::A1, 1> inQueueA1;
  TBuf<TPosition::A1> scaleBuf;
  TQue<QuePosition::B1, 1> inQueueB1;
  TQue<QuePosition::A2, 1> inQueueA2;
  TQue<QuePosition::B2, 1> inQueueB2;
  TQue<QuePosition::CO1, 1> outQueueCO1;
  GlobalTensor<int8_t> aGm, bGm;
  GlobalTensor<uint64_t> scaleGm;
  GlobalTensor<CType> cGm;
};

#define INT8_MATMUL(name, out)                                                               \
  extern "C" __global__ __cube__ void name(GM_ADDR a, GM_ADDR b, GM_ADDR scales, GM_ADDR c) { \
    KernelMatmulInt8<out> op;                                                                \
    op.Init(a, b, scales, c);                                                                \
    op.Process();                                                                            \
  }
INT8_MATMUL(matmul_i8_s32, I8Out::S32)
INT8_MATMUL(matmul_i8_deq, I8Out::DEQ)
INT8_MATMUL(matmul_i8_vdeq, I8Out::VDEQ)
INT8_MATMUL(matmul_i8_vdeq_fb, I8Out::VDEQ_FB)
INT8_MATMUL(matmul_i8_req, I8Out::REQ)


// ---------------------------------------------------------------- cube: the high-level Matmul API
// C[64, 40] (float) = A[64, 48] (half) * B (half) + bias[40] (float), as CANN's matmul samples write
// it: a TCubeTiling (here filled in the kernel, normally by the host's MatmulApiTiling), one
// Matmul object per core, each core taking singleCoreM rows. matmul_api_all: B [K, N], bias,
// IterateAll. matmul_api_iter: B stored [N, K] (SetTensorB(..., true)), no bias, Iterate/GetTensorC
// walking N first (iterateOrder 1).
template <bool BY_BLOCK, bool FORGET_B = false>
__aicore__ inline void MatmulApiKernel(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c) {
  constexpr int32_t M = 64, N = 40, K = 48;
  TCubeTiling tiling;
  tiling.usedCoreNum = GetBlockNum();
  tiling.M = M, tiling.N = N, tiling.Ka = K, tiling.Kb = K;
  tiling.singleCoreM = M / GetBlockNum(), tiling.singleCoreN = N, tiling.singleCoreK = K;
  tiling.baseM = 32, tiling.baseN = 16, tiling.baseK = 16;
  tiling.isBias = BY_BLOCK ? 0 : 1;
  tiling.iterateOrder = BY_BLOCK ? 1 : 0;
  const int64_t rows = tiling.singleCoreM * GetBlockIdx();
  GlobalTensor<half> aGm, bGm;
  GlobalTensor<float> biasGm, cGm;
  aGm.SetGlobalBuffer((__gm__ half*)a + rows * K, tiling.singleCoreM * K);
  bGm.SetGlobalBuffer((__gm__ half*)b, K * N);
  biasGm.SetGlobalBuffer((__gm__ float*)bias, N);
  cGm.SetGlobalBuffer((__gm__ float*)c + rows * N, tiling.singleCoreM * N);
  using aType = matmul::MatmulType<TPosition::GM, CubeFormat::ND, half>;
  using bType = matmul::MatmulType<TPosition::GM, CubeFormat::ND, half>;
  using cType = matmul::MatmulType<TPosition::GM, CubeFormat::ND, float>;
  using biasType = matmul::MatmulType<TPosition::GM, CubeFormat::ND, float>;
  TPipe pipe;
  matmul::Matmul<aType, bType, cType, biasType> mm;
  REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling);
  mm.SetTensorA(aGm);
  if constexpr (!FORGET_B) mm.SetTensorB(bGm, BY_BLOCK);
  if constexpr (BY_BLOCK) {
    while (mm.Iterate()) mm.GetTensorC(cGm);
  } else {
    mm.SetBias(biasGm);
    mm.IterateAll(cGm);
  }
  mm.End();
}
extern "C" __global__ __cube__ void matmul_api_all(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c) {
  MatmulApiKernel<false>(a, b, bias, c);
}
extern "C" __global__ __cube__ void matmul_api_iter(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c) {
  MatmulApiKernel<true>(a, b, bias, c);
}
extern "C" __global__ __cube__ void matmul_api_no_b(GM_ADDR a, GM_ADDR b, GM_ADDR bias, GM_ADDR c) {
  MatmulApiKernel<false, true>(a, b, bias, c);
}


// ---------------------------------------------------------------- cross-core flags, modes 1 and 0
// Two mix groups (4 AIVs): AIV i writes 10 * x[i] (8 floats) to ws[i]; after a mode-1 flag (the two
// AIVs of its group) it reads its partner's ws[i ^ 1] into pair[i]; after a mode-0 flag (every AIV)
// it reads ws[(i + 2) % 4], written by the other group, into far[i].
__aicore__ inline void CopyBlock(const GlobalTensor<float>& dst, const GlobalTensor<float>& src,
                                 const LocalTensor<float>& ub) {
  DataCopy(ub, src, 8);
  SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID1);
  WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID1);
  DataCopy(dst, ub, 8);
}
extern "C" __global__ __mix__(1, 2) void cross_core_modes(GM_ADDR x, GM_ADDR ws, GM_ADDR pair, GM_ADDR far) {
  if ASCEND_IS_AIC {
    return;
  }
  const int64_t i = GetBlockIdx();
  GlobalTensor<float> xGm, wsGm, pairGm, farGm;
  xGm.SetGlobalBuffer((__gm__ float*)x);
  wsGm.SetGlobalBuffer((__gm__ float*)ws);
  pairGm.SetGlobalBuffer((__gm__ float*)pair);
  farGm.SetGlobalBuffer((__gm__ float*)far);
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 3 * 8 * sizeof(float));
  LocalTensor<float> mine = buf.Get<float>(), partner = mine[8], other = mine[16];
  DataCopy(mine, xGm[i * 8], 8);
  SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
  Muls(mine, mine, 10.0f, 8);
  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  DataCopy(wsGm[i * 8], mine, 8);
  CrossCoreSetFlag<1, PIPE_MTE3>(5);
  CrossCoreWaitFlag<1, PIPE_MTE3>(5);
  CopyBlock(pairGm[i * 8], wsGm[(i ^ 1) * 8], partner);
  CrossCoreSetFlag<0, PIPE_MTE3>(6);
  CrossCoreWaitFlag<0, PIPE_MTE3>(6);
  CopyBlock(farGm[i * 8], wsGm[((i + 2) % 4) * 8], other);
}

// A 1 cube : 1 vector group: the AIC releases its one AIV (mode 2), which computes y = x + 1 and
// releases the AIC in turn.
extern "C" __global__ __mix__(1, 1) void mix11_handshake(GM_ADDR x, GM_ADDR y) {
  if ASCEND_IS_AIC {
    CrossCoreSetFlag<2, PIPE_FIX>(2);
    CrossCoreWaitFlag(3);
    return;
  }
  CrossCoreWaitFlag(2);
  GlobalTensor<float> xGm, yGm;
  xGm.SetGlobalBuffer((__gm__ float*)x);
  yGm.SetGlobalBuffer((__gm__ float*)y);
  TPipe pipe;
  TBuf<TPosition::VECCALC> buf;
  pipe.InitBuffer(buf, 8 * sizeof(float));
  LocalTensor<float> t = buf.Get<float>();
  DataCopy(t, xGm, 8);
  SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
  WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
  Adds(t, t, 1.0f, 8);
  SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
  WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
  DataCopy(yGm, t, 8);
  CrossCoreSetFlag<2, PIPE_MTE3>(3);
}

// ---------------------------------------------------------------- the C API (asc_simd.h)
// z = exp(x) * 2 + y over 512 floats per core, pointer-based: UB from asc_get_phy_buf_addr, pipe
// pairs ordered with asc_sync_notify / asc_sync_wait; then the repeat form: w = x + y on the first
// 40 lanes of each 64-lane repeat (asc_set_vector_mask), the rest of w left as copied (y).
// c_api_missing_sync forgets the MTE2 -> V wait.
template <bool FORGET_SYNC>
__aicore__ inline void CApiKernel(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR w) {
  constexpr uint32_t N = 512;
  asc_init();
  const int64_t at = asc_get_block_idx() * N;
  __ubuf__ float* xu = (__ubuf__ float*)asc_get_phy_buf_addr(0);
  __ubuf__ float* yu = (__ubuf__ float*)asc_get_phy_buf_addr(N * sizeof(float));
  __ubuf__ float* zu = (__ubuf__ float*)asc_get_phy_buf_addr(2 * N * sizeof(float));
  asc_copy_gm2ub(xu, (__gm__ float*)x + at, N * sizeof(float));
  asc_copy_gm2ub(yu, (__gm__ float*)y + at, N / 8, 1, 0, 0);  // burst form: N / 8 DataBlocks of 32 bytes
  if constexpr (!FORGET_SYNC) {
    asc_sync_notify(PIPE_MTE2, PIPE_V, EVENT_ID0);
    asc_sync_wait(PIPE_MTE2, PIPE_V, EVENT_ID0);
  }
  asc_exp(zu, xu, N);
  asc_mul_scalar(zu, zu, 2.0f, N);
  asc_add(zu, zu, yu, N);
  asc_sync_notify(PIPE_V, PIPE_MTE3, EVENT_ID0);
  asc_sync_wait(PIPE_V, PIPE_MTE3, EVENT_ID0);
  asc_copy_ub2gm((__gm__ float*)z + at, zu, N * sizeof(float));
  asc_sync_notify(PIPE_MTE3, PIPE_V, EVENT_ID0);  // zu is rewritten next: its copy-out must be done
  asc_sync_wait(PIPE_MTE3, PIPE_V, EVENT_ID0);
  asc_copy_ub2ub(zu, yu, N * sizeof(float));
  asc_set_vector_mask(0, (uint64_t{1} << 40) - 1);
  asc_add(zu, xu, yu, N / 64, 1, 1, 1, 8, 8, 8);
  asc_set_vector_mask(~uint64_t{0}, ~uint64_t{0});
  asc_sync();
  asc_copy_ub2gm_sync((__gm__ float*)w + at, zu, N * sizeof(float));
}
extern "C" __global__ __vector__ void c_api_kernel(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR w) {
  CApiKernel<false>(x, y, z, w);
}
extern "C" __global__ __vector__ void c_api_missing_sync(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR w) {
  CApiKernel<true>(x, y, z, w);
}

// The C API's conversions, reductions, gather and atomics, 512 floats per core: conv = half2float(
// float2half(x)), ints = float2int32_rd(x), rsum = one sum per 64-float repeat, bmax = one max per
// 8-float block, gath[i] = x[off[i] / 4] (byte offsets into the core's slice), and every core adds
// its slice into total under asc_set_atomic_add_float.
extern "C" __global__ __vector__ void c_api_vector_ops(GM_ADDR x, GM_ADDR off, GM_ADDR conv, GM_ADDR ints,
                                                        GM_ADDR rsum, GM_ADDR bmax, GM_ADDR gath, GM_ADDR total) {
  constexpr uint32_t N = 512;
  asc_init();
  const int64_t at = asc_get_block_idx() * N;
  __ubuf__ float* xu = (__ubuf__ float*)asc_get_phy_buf_addr(0);
  __ubuf__ half* hu = (__ubuf__ half*)asc_get_phy_buf_addr(2048);
  __ubuf__ float* cu = (__ubuf__ float*)asc_get_phy_buf_addr(3072);
  __ubuf__ int32_t* iu = (__ubuf__ int32_t*)asc_get_phy_buf_addr(5120);
  __ubuf__ float* su = (__ubuf__ float*)asc_get_phy_buf_addr(7168);
  __ubuf__ float* mu = (__ubuf__ float*)asc_get_phy_buf_addr(7200);
  __ubuf__ uint32_t* ou = (__ubuf__ uint32_t*)asc_get_phy_buf_addr(7456);
  __ubuf__ float* gu = (__ubuf__ float*)asc_get_phy_buf_addr(9504);
  asc_copy_gm2ub(xu, (__gm__ float*)x + at, N * sizeof(float));
  asc_copy_gm2ub(ou, (__gm__ uint32_t*)off + at, N * sizeof(uint32_t));
  asc_sync_notify(PIPE_MTE2, PIPE_V, EVENT_ID0);
  asc_sync_wait(PIPE_MTE2, PIPE_V, EVENT_ID0);
  asc_float2half(hu, xu, N);
  asc_half2float(cu, hu, N);
  asc_float2int32_rd(iu, xu, N);
  asc_repeat_reduce_sum(su, xu, N);
  asc_datablock_reduce_max(mu, xu, N);
  asc_gather(gu, xu, ou, N);
  asc_sync_notify(PIPE_V, PIPE_MTE3, EVENT_ID0);
  asc_sync_wait(PIPE_V, PIPE_MTE3, EVENT_ID0);
  asc_copy_ub2gm((__gm__ float*)conv + at, cu, N * sizeof(float));
  asc_copy_ub2gm((__gm__ int32_t*)ints + at, iu, N * sizeof(int32_t));
  asc_copy_ub2gm((__gm__ float*)rsum + asc_get_block_idx() * 8, su, 8 * sizeof(float));
  asc_copy_ub2gm((__gm__ float*)bmax + asc_get_block_idx() * 64, mu, 64 * sizeof(float));
  asc_copy_ub2gm((__gm__ float*)gath + at, gu, N * sizeof(float));
  asc_set_atomic_add_float();
  asc_copy_ub2gm((__gm__ float*)total, xu, N * sizeof(float));
  asc_set_atomic_none();
  asc_sync();
}

// ---------------------------------------------------------------- the C API's cube part (asc_cube.h)
// C[32][48] (float, ND) = A[32][64] * B[64][48] (half) in two halves of k, the second accumulating
// into L0C. Local memory as the C API declares it: arrays in L1 / L0A / L0B / L0C. A and B reach L1
// as NZ (asc_copy_gm2l1_nd2nz); A's fractals go to L0A row by row (asc_copy_l12l0a), B's through the
// transposing load (asc_copy_l12l0b_trans), or - B_TRANSPOSED, B given as [48][64] - the plain one.
// c_api_cube_missing_sync forgets the MTE1 -> M wait before the first asc_mmad.
template <bool B_TRANSPOSED, bool FORGET_SYNC>
__aicore__ inline void CApiCubeKernel(GM_ADDR a, GM_ADDR b, GM_ADDR c) {
  constexpr uint16_t M = 32, K = 64, N = 48, KH = K / 2, M1 = M / 16, K1 = K / 16, N1 = N / 16, KH1 = KH / 16;
  constexpr uint32_t FRAC = 256;  // half elements in a 512-byte fractal
  asc_init();
  __cbuf__ half a_l1[M * K], b_l1[K * N];
  __ca__ half a_l0[M * KH];
  __cb__ half b_l0[KH * N];
  __cc__ float c_l0[M * N];
  asc_copy_gm2l1_nd2nz(a_l1, (__gm__ half*)a, 1, M, K, 0, K, M, 1, 0);
  if constexpr (B_TRANSPOSED) {
    asc_copy_gm2l1_nd2nz(b_l1, (__gm__ half*)b, 1, N, K, 0, K, N, 1, 0);  // NZ of B^T: fractal (n, k) at k * N1 + n
  } else {
    asc_copy_gm2l1_nd2nz(b_l1, (__gm__ half*)b, 1, K, N, 0, N, K, 1, 0);  // NZ of B: fractal (k, n) at n * K1 + k
  }
  asc_sync_notify(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
  asc_sync_wait(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
  for (uint16_t h = 0; h < 2; ++h) {
    if (h > 0) {  // L0A / L0B are reloaded: the first asc_mmad must have read them
      asc_sync_notify(PIPE_M, PIPE_MTE1, EVENT_ID0);
      asc_sync_wait(PIPE_M, PIPE_MTE1, EVENT_ID0);
    }
    for (uint16_t mi = 0; mi < M1; ++mi)  // L0A row mi: the KH1 fractals of k-half h, M1 apart in L1
      asc_copy_l12l0a(a_l0 + mi * KH1 * FRAC, a_l1, h * KH1 * M1 + mi, KH1, M1, 0);
    for (uint16_t ki = 0; ki < KH1; ++ki) {  // L0B row ki: its N1 fractals
      const uint16_t k = h * KH1 + ki;
      if constexpr (B_TRANSPOSED) {
        asc_copy_l12l0b(b_l0 + ki * N1 * FRAC, b_l1, k * N1, N1, 1, 0);
      } else {
        asc_copy_l12l0b_trans(b_l0 + ki * N1 * FRAC, b_l1, k, N1, K1, 0, false, 0);
      }
    }
    if (!(FORGET_SYNC && h == 0)) {
      asc_sync_notify(PIPE_MTE1, PIPE_M, EVENT_ID0);
      asc_sync_wait(PIPE_MTE1, PIPE_M, EVENT_ID0);
    }
    asc_mmad(c_l0, a_l0, b_l0, M, KH, N, 0, false, false, h == 0);
  }
  asc_sync_notify(PIPE_M, PIPE_FIX, EVENT_ID0);
  asc_sync_wait(PIPE_M, PIPE_FIX, EVENT_ID0);
  asc_set_l0c_copy_params(1, 0, 0);
  asc_copy_l0c2gm((__gm__ float*)c, c_l0, N, M, N, M, 0, static_cast<uint64_t>(QuantMode_t::NoQuant), 0, false, true);
  asc_sync();
}
extern "C" __global__ __cube__ void c_api_cube_matmul(GM_ADDR a, GM_ADDR b, GM_ADDR c) {
  CApiCubeKernel<false, false>(a, b, c);
}
extern "C" __global__ __cube__ void c_api_cube_matmul_bt(GM_ADDR a, GM_ADDR b, GM_ADDR c) {
  CApiCubeKernel<true, false>(a, b, c);
}
extern "C" __global__ __cube__ void c_api_cube_missing_sync(GM_ADDR a, GM_ADDR b, GM_ADDR c) {
  CApiCubeKernel<false, true>(a, b, c);
}

// ---------------------------------------------------------------- host
KernelTable& Kernels() {
  static KernelTable table;
  return table;
}

static const RegisterKernels kKernels({
    {"vec_mask", [](auto& a, uint32_t d, aclrtStream s) { vec_mask<<<d, nullptr, s>>>(a[0], a[1], a[2]); }},
    {"reduce_stats", [](auto& a, uint32_t d, aclrtStream s) { reduce_stats<<<d, nullptr, s>>>(a[0], a[1], a[2]); }},
    {"cmp_select", [](auto& a, uint32_t d, aclrtStream s) { cmp_select<<<d, nullptr, s>>>(a[0], a[1], a[2]); }},
    {"matmul_nn", [](auto& a, uint32_t d, aclrtStream s) { matmul_nn<<<d, nullptr, s>>>(a[0], a[1], a[2]); }},
    {"matmul_nt", [](auto& a, uint32_t d, aclrtStream s) { matmul_nt<<<d, nullptr, s>>>(a[0], a[1], a[2]); }},
    {"matmul_split_nd", [](auto& a, uint32_t d, aclrtStream s) { matmul_split_nd<<<d, nullptr, s>>>(a[0], a[1], a[2]); }},
    {"c_api_kernel", [](auto& a, uint32_t d, aclrtStream s) { c_api_kernel<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3]); }},
    {"c_api_vector_ops", [](auto& a, uint32_t d, aclrtStream s) {
       c_api_vector_ops<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
     }},
    {"c_api_cube_matmul", [](auto& a, uint32_t d, aclrtStream s) { c_api_cube_matmul<<<d, nullptr, s>>>(a[0], a[1], a[2]); }},
    {"c_api_cube_matmul_bt",
     [](auto& a, uint32_t d, aclrtStream s) { c_api_cube_matmul_bt<<<d, nullptr, s>>>(a[0], a[1], a[2]); }},
    {"c_api_cube_missing_sync",
     [](auto& a, uint32_t d, aclrtStream s) { c_api_cube_missing_sync<<<d, nullptr, s>>>(a[0], a[1], a[2]); }},
    {"c_api_missing_sync",
     [](auto& a, uint32_t d, aclrtStream s) { c_api_missing_sync<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3]); }},
    {"matmul_api_all",
     [](auto& a, uint32_t d, aclrtStream s) { matmul_api_all<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3]); }},
    {"matmul_api_iter",
     [](auto& a, uint32_t d, aclrtStream s) { matmul_api_iter<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3]); }},
    {"matmul_api_no_b",
     [](auto& a, uint32_t d, aclrtStream s) { matmul_api_no_b<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3]); }},
    {"matmul_nz_out", [](auto& a, uint32_t d, aclrtStream s) { matmul_nz_out<<<d, nullptr, s>>>(a[0], a[1], a[2]); }},
    {"matmul_i8_s32", [](auto& a, uint32_t d, aclrtStream s) { matmul_i8_s32<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3]); }},
    {"matmul_i8_deq", [](auto& a, uint32_t d, aclrtStream s) { matmul_i8_deq<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3]); }},
    {"matmul_i8_vdeq",
     [](auto& a, uint32_t d, aclrtStream s) { matmul_i8_vdeq<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3]); }},
    {"matmul_i8_vdeq_fb",
     [](auto& a, uint32_t d, aclrtStream s) { matmul_i8_vdeq_fb<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3]); }},
    {"matmul_i8_req", [](auto& a, uint32_t d, aclrtStream s) { matmul_i8_req<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3]); }},
    {"matmul_nn_flipped",
     [](auto& a, uint32_t d, aclrtStream s) { matmul_nn_flipped<<<d, nullptr, s>>>(a[0], a[1], a[2]); }},
    {"mix_matmul_relu",
     [](auto& a, uint32_t d, aclrtStream s) { mix_matmul_relu<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3]); }},
    {"cross_core_modes",
     [](auto& a, uint32_t d, aclrtStream s) { cross_core_modes<<<d, nullptr, s>>>(a[0], a[1], a[2], a[3]); }},
    {"mix11_handshake", [](auto& a, uint32_t d, aclrtStream s) { mix11_handshake<<<d, nullptr, s>>>(a[0], a[1]); }},
    {"static_scale", [](auto& a, uint32_t d, aclrtStream s) { static_scale<<<d, nullptr, s>>>(a[0], a[1]); }},
    {"atomic_total", [](auto& a, uint32_t d, aclrtStream s) { atomic_total<<<d, nullptr, s>>>(a[0], a[1]); }},
    {"missing_sync", [](auto& a, uint32_t d, aclrtStream s) { missing_sync<<<d, nullptr, s>>>(a[0], a[1]); }},
    {"missing_war_sync", [](auto& a, uint32_t d, aclrtStream s) { missing_war_sync<<<d, nullptr, s>>>(a[0], a[1]); }},
    {"missing_gm_sync", [](auto& a, uint32_t d, aclrtStream s) { missing_gm_sync<<<d, nullptr, s>>>(a[0], a[1]); }},
    {"unmatched_wait", [](auto& a, uint32_t d, aclrtStream s) { unmatched_wait<<<d, nullptr, s>>>(a[0]); }},
    {"assert_and_print", [](auto& a, uint32_t d, aclrtStream s) { assert_and_print<<<d, nullptr, s>>>(a[0]); }},
});

#define CHECK_ACL(expr)                                                                \
  do {                                                                                 \
    aclError rc_ = (expr);                                                             \
    if (rc_ != ACL_SUCCESS) {                                                          \
      std::fprintf(stderr, "%s failed: %d %s\n", #expr, rc_, aclGetRecentErrMsg());    \
      return 1;                                                                        \
    }                                                                                  \
  } while (0)

int main(int argc, char** argv) {
  if (argc < 3 || Kernels().count(argv[1]) == 0) {
    std::fprintf(stderr, "usage: kernels <name> <blockDim> in:<file>... out:<bytes>:<file>...\n");
    return 64;
  }
  CHECK_ACL(aclInit(nullptr));
  CHECK_ACL(aclrtSetDevice(0));
  aclrtStream stream = nullptr;
  CHECK_ACL(aclrtCreateStream(&stream));
  std::vector<uint8_t*> dev;
  std::vector<std::pair<std::string, size_t>> outs;  // (file, bytes) per buffer, "" for inputs
  for (int i = 3; i < argc; ++i) {
    std::string arg = argv[i];
    std::vector<char> host;
    std::string file;
    if (arg.rfind("in:", 0) == 0) {
      std::ifstream f(arg.substr(3), std::ios::binary);
      host.assign(std::istreambuf_iterator<char>(f), {});
    } else {
      size_t colon = arg.find(':', 4);
      host.assign(std::stoull(arg.substr(4, colon - 4)), 0);
      file = arg.substr(colon + 1);
    }
    uint8_t* d = nullptr;
    CHECK_ACL(aclrtMalloc((void**)&d, host.size(), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK_ACL(aclrtMemcpy(d, host.size(), host.data(), host.size(), ACL_MEMCPY_HOST_TO_DEVICE));
    dev.push_back(d);
    outs.emplace_back(file, host.size());
  }
  Kernels().at(argv[1])(dev, static_cast<uint32_t>(std::stoul(argv[2])), stream);
  CHECK_ACL(aclrtSynchronizeStream(stream));
  for (size_t i = 0; i < dev.size(); ++i) {
    if (outs[i].first.empty()) continue;
    std::vector<char> host(outs[i].second);
    CHECK_ACL(aclrtMemcpy(host.data(), host.size(), dev[i], host.size(), ACL_MEMCPY_DEVICE_TO_HOST));
    std::ofstream(outs[i].first, std::ios::binary).write(host.data(), host.size());
  }
  for (uint8_t* d : dev) CHECK_ACL(aclrtFree(d));
  CHECK_ACL(aclrtDestroyStream(stream));
  CHECK_ACL(aclFinalize());
  return 0;
}
