"""AscendC for cube kernels (tiling kind matmul): GM -> L1 -> L0A/L0B -> Mmad -> L0C -> Fixpipe -> GM.

Output tiles of base_m x base_n are dealt round-robin over the blocks. For each tile the K loop
copies an A and a B tile into L1 in NZ (DataCopy with Nd2NzParams), splits them into L0A (zZ) and
L0B fractals (LoadData), and accumulates into L0C (Mmad, init on the first K tile); Fixpipe then
writes the fp32 accumulator to GM in ND, converting to the output dtype. Fractal padding along K
is zeroed (InitConstValue) because the cube multiplies whole fractals.
"""

from __future__ import annotations

from torch_mlir import ir

from .ascendc import CodegenError, KernelSignature, ctype
from .kernel_model import CUBE_OPS, analyze, body_ops, elem_bytes, is_scalar_op

_QUANT = {"half": "QuantMode_t::F322F16", "bfloat16_t": "QuantMode_t::F322BF16", "float": "QuantMode_t::NoQuant"}


def _check(kernel: ir.Operation, op: ir.Operation, name: str) -> None:
    extra = [o.name for o in body_ops(kernel) if o.name not in CUBE_OPS and not is_scalar_op(o)]
    if extra:
        raise CodegenError(f"ERR03007 GRAPH kernel @{name}: the AscendC emitter has no matmul epilogue "
                           f"({', '.join(extra)}); run ascend-fuse with epilogue=false")
    for flag in ("transpose_a", "transpose_b"):
        if flag in op.attributes and ir.BoolAttr(op.attributes[flag]).value:
            raise CodegenError(f"ERR03007 GRAPH kernel @{name}: {flag} has no AscendC lowering yet; "
                               "materialize the transpose before the matmul")
    if len(op.operands) > 2:
        raise CodegenError(f"ERR03007 GRAPH kernel @{name}: matmul bias has no AscendC lowering yet")
    for v in op.operands:
        if ir.RankedTensorType(v.type).encoding is not None:
            raise CodegenError(f"ERR03007 GRAPH kernel @{name}: the emitter reads ND operands only")


def emit(kernel: ir.Operation, sig: KernelSignature) -> str:
    op = analyze(kernel).cube_op
    _check(kernel, op, sig.name)
    a, b = op.operands[0], op.operands[1]
    if [v for _, v in sig.inputs] != [a, b]:
        raise CodegenError(f"ERR03007 GRAPH kernel @{sig.name}: matmul operands must be the kernel arguments")
    t, out_t = ctype(a.type), ctype(sig.outputs[0][1].type)
    if elem_bytes(a.type) not in (2, 4) or t != ctype(b.type):
        raise CodegenError(f"ERR03007 GRAPH kernel @{sig.name}: cube operands must both be fp16, bf16 or fp32")
    quant = _QUANT.get(out_t)
    if quant is None:
        raise CodegenError(f"ERR03007 GRAPH kernel @{sig.name}: Fixpipe cannot write {out_t}")
    return f"""class Kernel_{sig.name} {{
 public:
  static constexpr int64_t C0 = 32 / sizeof({t});     // fractal columns
  static constexpr int64_t FRAC = 512 / sizeof({t});  // elements of one fractal

  __aicore__ inline void Init(GM_ADDR in0, GM_ADDR in1, GM_ADDR out0, const {sig.name}_TilingData& t) {{
    tiling_ = t;
    aGm.SetGlobalBuffer(reinterpret_cast<__gm__ {t}*>(in0));
    bGm.SetGlobalBuffer(reinterpret_cast<__gm__ {t}*>(in1));
    cGm.SetGlobalBuffer(reinterpret_cast<__gm__ {out_t}*>(out0));
    const int64_t m16 = Up16(t.base_m), n16 = Up16(t.base_n), k16 = Up16(t.base_k);
    pipe.InitBuffer(a1Que, BUFFER_NUM, m16 * k16 * sizeof({t}));
    pipe.InitBuffer(b1Que, BUFFER_NUM, k16 * n16 * sizeof({t}));
    pipe.InitBuffer(a2Que, BUFFER_NUM, m16 * k16 * sizeof({t}));
    pipe.InitBuffer(b2Que, BUFFER_NUM, k16 * n16 * sizeof({t}));
    pipe.InitBuffer(c1Que, 1, m16 * n16 * sizeof(float));
  }}
  __aicore__ inline void Process() {{
    const int64_t perBatch = tiling_.tiles_m * tiling_.tiles_n;
    for (int64_t tile = GetBlockIdx(); tile < tiling_.batch * perBatch; tile += GetBlockNum()) {{
      const int64_t bt = tile / perBatch, tm = tile % perBatch / tiling_.tiles_n, tn = tile % tiling_.tiles_n;
      const int64_t mLen = tm == tiling_.tiles_m - 1 ? tiling_.tail_m : tiling_.base_m;
      const int64_t nLen = tn == tiling_.tiles_n - 1 ? tiling_.tail_n : tiling_.base_n;
      LocalTensor<float> c = c1Que.AllocTensor<float>();
      for (int64_t kt = 0; kt < tiling_.k_tiles; ++kt) {{
        const int64_t kLen = kt == tiling_.k_tiles - 1 ? tiling_.tail_k : tiling_.base_k;
        CopyIn(bt, tm, tn, kt, mLen, nLen, kLen);
        SplitLoad(mLen, nLen, kLen);
        Compute(c, mLen, nLen, kLen, kt == 0);
      }}
      c1Que.EnQue(c);
      CopyOut(bt, tm, tn, mLen, nLen);
    }}
  }}

 private:
  static __aicore__ inline int64_t Up16(int64_t x) {{ return (x + 15) / 16 * 16; }}

  __aicore__ inline void CopyIn(int64_t bt, int64_t tm, int64_t tn, int64_t kt, int64_t mLen, int64_t nLen,
                                int64_t kLen) {{
    const int64_t m = tiling_.m, n = tiling_.n, k = tiling_.k;
    LocalTensor<{t}> a1 = a1Que.AllocTensor<{t}>();
    LocalTensor<{t}> b1 = b1Que.AllocTensor<{t}>();
    if (kLen % 16 != 0) {{  // K padding is multiplied: it must be zero
      InitConstValue(a1, InitConstValueParams{{static_cast<uint16_t>(Up16(mLen) * Up16(kLen) / FRAC), 16, 0, 0}});
      InitConstValue(b1, InitConstValueParams{{static_cast<uint16_t>(Up16(kLen) * Up16(nLen) / FRAC), 16, 0, 0}});
    }}
    DataCopy(a1, aGm[bt * m * k + tm * tiling_.base_m * k + kt * tiling_.base_k],
             Nd2NzParams{{1, static_cast<uint16_t>(mLen), static_cast<uint16_t>(kLen), 0, static_cast<uint16_t>(k),
                         static_cast<uint16_t>(Up16(mLen)), 1, 0}});
    DataCopy(b1, bGm[bt * k * n + kt * tiling_.base_k * n + tn * tiling_.base_n],
             Nd2NzParams{{1, static_cast<uint16_t>(kLen), static_cast<uint16_t>(nLen), 0, static_cast<uint16_t>(n),
                         static_cast<uint16_t>(Up16(kLen)), 1, 0}});
    a1Que.EnQue(a1);
    b1Que.EnQue(b1);
  }}
  __aicore__ inline void SplitLoad(int64_t mLen, int64_t nLen, int64_t kLen) {{
    LocalTensor<{t}> a1 = a1Que.DeQue<{t}>();
    LocalTensor<{t}> b1 = b1Que.DeQue<{t}>();
    LocalTensor<{t}> a2 = a2Que.AllocTensor<{t}>();
    LocalTensor<{t}> b2 = b2Que.AllocTensor<{t}>();
    const int64_t m1 = Up16(mLen) / 16, k1 = Up16(kLen) / C0, kb = Up16(kLen) / 16, n1 = (nLen + C0 - 1) / C0;
    for (int64_t mi = 0; mi < m1; ++mi) {{  // NZ in L1 -> zZ in L0A: one row of fractals per mi
      LoadData(a2[mi * k1 * FRAC], a1, LoadData2dParams{{static_cast<uint16_t>(mi), static_cast<uint8_t>(k1),
                                                         static_cast<uint16_t>(m1), 0, 0, false, 0}});
    }}
    for (int64_t ki = 0; ki < kb; ++ki) {{
      LoadData(b2[ki * n1 * FRAC], b1, LoadData2dParams{{static_cast<uint16_t>(ki), static_cast<uint8_t>(n1),
                                                         static_cast<uint16_t>(kb), 0, 0, false, 0}});
    }}
    a2Que.EnQue(a2);
    b2Que.EnQue(b2);
    a1Que.FreeTensor(a1);
    b1Que.FreeTensor(b1);
  }}
  __aicore__ inline void Compute(const LocalTensor<float>& c, int64_t mLen, int64_t nLen, int64_t kLen, bool init) {{
    LocalTensor<{t}> a2 = a2Que.DeQue<{t}>();
    LocalTensor<{t}> b2 = b2Que.DeQue<{t}>();
    MmadParams p;
    p.m = static_cast<uint16_t>(mLen);
    p.n = static_cast<uint16_t>(nLen);
    p.k = static_cast<uint16_t>(kLen);
    p.cmatrixInitVal = init;
    Mmad(c, a2, b2, p);
    a2Que.FreeTensor(a2);
    b2Que.FreeTensor(b2);
  }}
  __aicore__ inline void CopyOut(int64_t bt, int64_t tm, int64_t tn, int64_t mLen, int64_t nLen) {{
    LocalTensor<float> c = c1Que.DeQue<float>();
    FixpipeParamsV220 p;
    p.nSize = static_cast<uint16_t>(nLen);
    p.mSize = static_cast<uint16_t>(mLen);
    p.srcStride = static_cast<uint16_t>(Up16(mLen));
    p.dstStride = static_cast<uint32_t>(tiling_.n);
    p.quantPre = {quant};
    Fixpipe(cGm[bt * tiling_.m * tiling_.n + tm * tiling_.base_m * tiling_.n + tn * tiling_.base_n], c, p);
    c1Que.FreeTensor(c);
  }}

  TPipe pipe;
  TQue<QuePosition::A1, BUFFER_NUM> a1Que;
  TQue<QuePosition::B1, BUFFER_NUM> b1Que;
  TQue<QuePosition::A2, BUFFER_NUM> a2Que;
  TQue<QuePosition::B2, BUFFER_NUM> b2Que;
  TQue<QuePosition::CO1, 1> c1Que;
  GlobalTensor<{t}> aGm, bGm;
  GlobalTensor<{out_t}> cGm;
  {sig.name}_TilingData tiling_;
}};
"""
