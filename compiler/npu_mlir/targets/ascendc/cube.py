"""AscendC for cube kernels (tiling kind matmul): GM -> L1 -> L0A/L0B -> Mmad -> L0C -> Fixpipe -> GM.

Output tiles of base_m x base_n are dealt round-robin over the blocks. For each tile the K loop
copies an A and a B tile into L1 in NZ (DataCopy with Nd2NzParams; a 16-bit operand already stored in
FRACTAL_NZ is copied as is, one burst per 16-column group), loads them into L0A (zZ) and
L0B (nZ: column-major fractals) with LoadData, and accumulates into L0C (Mmad, init on the first K
tile); Fixpipe then writes the fp32 accumulator to GM in ND, converting to the output dtype. A
B stored [k, n] needs each fractal transposed on the way to L0B (LoadData ifTranspose for 16-bit,
LoadDataWithTranspose for fp32) and a B stored [n, k] none; A the other way round (the layouts
are listed in cpu_twin/twin/cube.h). Fractal padding along K is zeroed (InitConstValue) because
the cube multiplies whole fractals.

A vector epilogue runs on the AIVs of each 1 AIC : 2 AIV group, reading the tile Fixpipe wrote to GM
(the two kinds of core share nothing closer). It runs in place on the result when Fixpipe writes the
result's own dtype; otherwise (a float epilogue of an fp16 / bf16 result, or several results) Fixpipe
writes the fp32 tile to a per-AIC GM workspace (the `workspace` kernel argument that comes before
`tiling`, as in CANN's kernels) and the epilogue writes each result from UB.
"""

from __future__ import annotations

from torch_mlir import ir

from .emit import CodegenError, KernelSignature, ctype
from ...dialects.ascend.shaped import tensor_format
from .vector import Names, compute
from ...analysis.kernel_model import analyze, cube_sources, elem_bytes, epilogue_ops, epilogue_values

_QUANT = {"half": "QuantMode_t::F322F16", "bfloat16_t": "QuantMode_t::F322BF16", "float": "QuantMode_t::NoQuant"}


def _flag(op: ir.Operation, name: str) -> bool:
    return name in op.attributes and bool(ir.BoolAttr(op.attributes[name]).value)


def _nd2nz(rows: str, cols: str, src_cols: str, c0_stride: str) -> str:
    """Nd2NzParams(ndNum, nValue, dValue, srcNdMatrixStride, srcDValue, dstNzC0Stride, dstNzNStride,
    dstNzMatrixStride) of one ND tile copied GM -> L1."""
    return (f"Nd2NzParams(1, static_cast<uint16_t>({rows}), static_cast<uint16_t>({cols}), 0, "
            f"static_cast<uint16_t>({src_cols}), static_cast<uint16_t>({c0_stride}), 1, 0)")


def _copies(ta: bool, tb: bool, wide: bool) -> tuple[str, str]:
    """DataCopy GM -> L1 (NZ) of the A and B tiles; a transposed operand is copied as stored ([k, m] / [n, k]).

    A 32-bit B that is not transposed is copied as blocks of 16 rows, each its own NZ matrix with
    16-row column groups, so that LoadDataWithTranspose finds the two 16 x 8 fractals of each
    16 x 16 square side by side."""
    if ta and wide:
        a = ("for (int64_t kb = 0; kb * 16 < kLen; ++kb) {  // 16-row blocks of [k, m], each NZ with 16-row column groups\n"
             "      const int64_t rows = kLen - kb * 16 < 16 ? kLen - kb * 16 : 16;\n"
             "      DataCopy(a1[kb * 16 * Up16(mLen)], aGm[bt * m * k + (kt * tiling_.base_k + kb * 16) * m + tm * tiling_.base_m],\n"
             f"               {_nd2nz('rows', 'mLen', 'm', '16')});\n"
             "    }")
    elif ta:
        a = f"DataCopy(a1, aGm[bt * m * k + kt * tiling_.base_k * m + tm * tiling_.base_m],\n             {_nd2nz('kLen', 'mLen', 'm', 'Up16(kLen)')});"
    else:
        a = f"DataCopy(a1, aGm[bt * m * k + tm * tiling_.base_m * k + kt * tiling_.base_k],\n             {_nd2nz('mLen', 'kLen', 'k', 'Up16(mLen)')});"
    if tb:
        b = f"DataCopy(b1, bGm[bt * k * n + tn * tiling_.base_n * k + kt * tiling_.base_k],\n             {_nd2nz('nLen', 'kLen', 'k', 'Up16(nLen)')});"
    elif wide:
        b = ("for (int64_t kb = 0; kb * 16 < kLen; ++kb) {  // 16-row blocks, each NZ with 16-row column groups\n"
             "      const int64_t rows = kLen - kb * 16 < 16 ? kLen - kb * 16 : 16;\n"
             "      DataCopy(b1[kb * 16 * Up16(nLen)], bGm[bt * k * n + (kt * tiling_.base_k + kb * 16) * n + tn * tiling_.base_n],\n"
             f"               {_nd2nz('rows', 'nLen', 'n', '16')});\n"
             "    }")
    else:
        b = f"DataCopy(b1, bGm[bt * k * n + kt * tiling_.base_k * n + tn * tiling_.base_n],\n             {_nd2nz('kLen', 'nLen', 'n', 'Up16(kLen)')});"
    return a, b


def _nz_copy(x: str, row0: str, col0: str, rows: str, cols: str, c0_stride: str, padded_rows: str,
             wide: bool = False) -> str:
    """DataCopy GM -> L1 of a tile of an operand stored in FRACTAL_NZ (DESIGN.md section 4): a
    16-column group is a run of `padded_rows` rows of 16 elements. For 16-bit types that is a row
    of 32 bytes in GM as in L1, so the tile is one burst of `rows` blocks per column group, no
    conversion. An fp32 row of a group is 64 bytes, two of L1's 8-column (32-byte) groups: each L1
    group takes every other 32-byte block of its GM group."""
    if wide:
        return (f"for (int64_t g = 0; g * 8 < {cols}; ++g) {{  // stored in NZ (16-column groups): halves into 8-column groups\n"
                f"      const int64_t col = {col0} + g * 8;\n"
                f"      DataCopy({x}1[g * {c0_stride} * 8], {x}Gm[col / 16 * ({padded_rows}) * 16 + ({row0}) * 16 + col % 16],\n"
                f"               DataCopyParams(static_cast<uint16_t>({rows}), 1, 1, 0));\n"
                "    }")
    return (f"DataCopy({x}1, {x}Gm[({col0}) / 16 * ({padded_rows}) * 16 + ({row0}) * 16],\n"
            f"             DataCopyParams(static_cast<uint16_t>(({cols} + 15) / 16), static_cast<uint16_t>({rows}),\n"
            f"                            static_cast<uint16_t>(({padded_rows}) - {rows}), "
            f"static_cast<uint16_t>({c0_stride} - {rows})));  // stored in NZ: read as is")


def _nz_copies(ta: bool, tb: bool, a_nz: bool, b_nz: bool, copies: tuple[str, str], wide: bool) -> tuple[str, str]:
    """`copies` with the copy of each operand stored in NZ replaced by an NZ -> NZ one (fp32: only
    where L1 holds the plain NZ layout, A as [m, k] and B as [n, k]; _check refuses the others)."""
    a, b = copies
    if a_nz:
        a = (_nz_copy("a", "kt * tiling_.base_k", "tm * tiling_.base_m", "kLen", "mLen", "Up16(kLen)", "Up16(k)") if ta
             else _nz_copy("a", "tm * tiling_.base_m", "kt * tiling_.base_k", "mLen", "kLen", "Up16(mLen)", "Up16(m)",
                           wide))
    if b_nz:
        b = (_nz_copy("b", "tn * tiling_.base_n", "kt * tiling_.base_k", "nLen", "kLen", "Up16(nLen)", "Up16(n)", wide)
             if tb else _nz_copy("b", "kt * tiling_.base_k", "tn * tiling_.base_n", "kLen", "nLen", "Up16(kLen)", "Up16(k)"))
    return a, b


def _splits(ta: bool, tb: bool, wide: bool) -> tuple[str, str]:
    """L1 (NZ) -> L0A (zZ) / L0B (nZ), as LoadData2DParams(startIndex, repeatTimes, srcStride, sid, dstGap,
    ifTranspose, addrMode): A needs a fractal transpose only when stored transposed, B only when not."""
    if ta and wide:
        a = ("for (int64_t kb = 0; kb < kb16; ++kb) {  // each 16 x 16 square -> two 16 x 8 zZ fractals side by side\n"
             "      LoadDataWithTranspose(a2[2 * kb * FRAC], a1[kb * 16 * Up16(mLen)],\n"
             "                            LoadData2dTransposeParams(0, static_cast<uint8_t>(m1), 1,\n"
             "                                                      static_cast<uint16_t>(k1 - 1), 0));\n"
             "    }")
    elif ta:
        a = ("for (int64_t mi = 0; mi < m1; ++mi) {  // [k, m] NZ: each fractal transposed, already in zZ order\n"
             "      LoadData(a2[mi * k1 * FRAC], a1, LoadData2DParams(static_cast<uint16_t>(mi * k1), static_cast<uint8_t>(k1), 1,\n"
             "                                                         0, 0, true, 0));\n"
             "    }")
    else:
        a = ("for (int64_t mi = 0; mi < m1; ++mi) {  // NZ in L1 -> zZ in L0A: one row of fractals per mi\n"
             "      LoadData(a2[mi * k1 * FRAC], a1, LoadData2DParams(static_cast<uint16_t>(mi), static_cast<uint8_t>(k1),\n"
             "                                                         static_cast<uint16_t>(m1), 0, 0, false, 0));\n"
             "    }")
    if tb:
        b = ("for (int64_t ki = 0; ki < k1; ++ki) {  // [n, k] NZ is already nZ: plain copy, a row of fractals per ki\n"
             "      LoadData(b2[ki * n1 * FRAC], b1, LoadData2DParams(static_cast<uint16_t>(ki * n1), static_cast<uint8_t>(n1), 1,\n"
             "                                                         0, 0, false, 0));\n"
             "    }")
    elif wide:
        b = ("for (int64_t kb = 0; kb < kb16; ++kb) {  // each 16 x 16 square -> two 8 x 16 nZ fractals, n1 apart\n"
             "      LoadDataWithTranspose(b2[2 * kb * n1 * FRAC], b1[kb * 16 * Up16(nLen)],\n"
             "                            LoadData2dTransposeParams(0, static_cast<uint8_t>(n1), 1, 0,\n"
             "                                                      static_cast<uint16_t>(n1 - 1)));\n"
             "    }")
    else:
        b = ("for (int64_t ki = 0; ki < kb16; ++ki) {  // NZ in L1 -> nZ in L0B: transpose each fractal, a row per ki\n"
             "      LoadData(b2[ki * n1 * FRAC], b1, LoadData2DParams(static_cast<uint16_t>(ki), static_cast<uint8_t>(n1),\n"
             "                                                         static_cast<uint16_t>(kb16), 0, 0, true, 0));\n"
             "    }")
    return a, b


def _check(op: ir.Operation, sig: KernelSignature) -> None:
    if len(op.operands) > 2:
        raise CodegenError(f"ERR03007 GRAPH kernel @{sig.name}: matmul bias has no AscendC lowering yet")
    # L1 holds an fp32 operand in plain NZ only as A [m, k] and B [n, k] (the other two are 16-row blocks).
    plain = (not _flag(op, "transpose_a"), _flag(op, "transpose_b"))
    for v, plain_l1 in zip(cube_sources(op), plain):  # an ND operand cast to NZ in the kernel is the ND2NZ copy-in
        fmt = tensor_format(v.type)
        if fmt == "FRACTAL_NZ" and sig.tiling["batch"] == 1 and (elem_bytes(v.type) == 2
                                                                   or elem_bytes(v.type) == 4 and plain_l1):
            continue  # stored in NZ (16-column fractal groups): read as is
        if fmt != "ND":
            raise CodegenError(f"ERR03007 GRAPH kernel @{sig.name}: the emitter reads ND operands, unbatched 16-bit "
                               f"FRACTAL_NZ ones and fp32 ones as A or transposed B, not a {ctype(v.type)} {fmt} one")


def _fixpipe_value(op: ir.Operation, epilogue: list[ir.Operation]) -> tuple[ir.Value, list[ir.Operation]]:
    """The value Fixpipe writes: a cast of the accumulator to fp16/bf16 right after the matmul folds
    into Fixpipe's conversion (quantPre), as the hardware does it."""
    acc = op.results[0]
    if epilogue and epilogue[0].name == "ascend.cast" and epilogue[0].operands[0] == acc \
            and ctype(epilogue[0].results[0].type) in ("half", "bfloat16_t") and len(list(acc.uses)) == 1:
        return epilogue[0].results[0], epilogue[1:]
    return acc, epilogue


def _epilogue(kernel: ir.Operation, sig: KernelSignature, fixed: ir.Value, ops: list[ir.Operation],
              staged: bool) -> tuple[list[str], list[str], str]:
    """(members, Init lines, Epilogue method) of the vector epilogue run on each output tile in GM:
    in place on the result, or (`staged`) from the workspace tile to every result."""
    model = analyze(kernel)
    values = epilogue_values(kernel, model)
    if isinstance(values, str):
        raise CodegenError(f"ERR03007 GRAPH kernel @{sig.name}: {values}")
    names = Names(sig, [])
    names.count = {"full": "n", "col": "pitch"}
    names.pitch = "pitch"
    cls = dict(values)
    cls[fixed] = "full"
    local = {fixed: "acc"}
    for i, o in enumerate(ops):
        local[o.results[0]] = f"e{i}"
    for name, v in _other_inputs(kernel, sig):
        local[v] = name
    for v, var in local.items():
        names.expr[v] = var
        names.cls[v] = cls[v]
    members, init, loads = [], [], []
    for v, var in local.items():
        t = ctype(v.type)
        size = "tiling_.epilogue_rows * tiling_.epilogue_pitch" if cls[v] == "full" else "tiling_.epilogue_pitch"
        members.append(f"TBuf<TPosition::VECCALC> {var}Buf;")
        init.append(f"pipe.InitBuffer({var}Buf, {size} * sizeof({t}));")
        loads.append(f"LocalTensor<{t}> {var} = {var}Buf.Get<{t}>();")
    copy_in = ["CopyRowsIn(acc, wsGm[block * tiling_.base_m * tiling_.base_n + r0 * tiling_.base_n], rows, nLen, pitch, "
               "tiling_.base_n);  // the tile Fixpipe wrote" if staged else
               "CopyRowsIn(acc, cGm[at], rows, nLen, pitch, tiling_.n);  // the tile Fixpipe wrote"]
    masks = []
    for name, v in _other_inputs(kernel, sig):
        t = ctype(v.type)
        if str(ir.RankedTensorType(v.type).element_type) == "i1":
            masks += _mask_from_bytes(sig, name, v, cls[v], local)
        members.append(f"GlobalTensor<{t}> {name}Gm;")
        init.append(f"{name}Gm.SetGlobalBuffer(reinterpret_cast<__gm__ {t}*>({name}));")
        copy_in.append(f"CopyRowsIn({name}, {name}Gm[at], rows, nLen, pitch, tiling_.n);" if cls[v] == "full"
                       else f"CopyIn1D({name}, {name}Gm[n0], nLen);")
    copy_out = []
    for name, v in sig.outputs:
        if local.get(v) is None or cls[v] != "full":
            raise CodegenError(f"ERR03007 GRAPH kernel @{sig.name}: result {name} is not an epilogue tile")
        gm = f"{name}Gm" if staged else "cGm"
        copy_out.append(f"CopyRowsOut({gm}[at], {local[v]}, rows, nLen, pitch, tiling_.n);")
        if staged:
            members.append(f"GlobalTensor<{ctype(v.type)}> {name}Gm;")
            init.append(f"{name}Gm.SetGlobalBuffer(reinterpret_cast<__gm__ {ctype(v.type)}*>({name}));")
    body = loads + copy_in + ["SetFlag<HardEvent::MTE2_V>(0);", "WaitFlag<HardEvent::MTE2_V>(0);"] + masks
    body += compute(ops, names)
    body += ["SetFlag<HardEvent::V_MTE3>(0);", "WaitFlag<HardEvent::V_MTE3>(0);", *copy_out,
             "SetFlag<HardEvent::MTE3_MTE2>(0);", "WaitFlag<HardEvent::MTE3_MTE2>(0);"]
    method = "\n".join([
        "  // AIV side of the mix kernel: each of the group's two AIVs takes half of the output tile's rows,",
        "  // epilogue_rows at a time, GM -> UB -> vector ops -> GM.",
        f"  __aicore__ inline void Epilogue({'int64_t block, ' if staged else ''}int64_t row0, int64_t n0, int64_t mLen, "
        "int64_t nLen) {",
        "    CrossCoreWaitFlag(0);  // Fixpipe (AIC) has written the tile",
        "    const int64_t pitch = (nLen + ALIGN - 1) / ALIGN * ALIGN;",
        "    const int64_t share = (mLen + 1) / 2, lo = GetSubBlockIdx() * share, hi = lo + share < mLen ? lo + share : mLen;",
        "    for (int64_t r0 = lo; r0 < hi; r0 += tiling_.epilogue_rows) {",
        "      const int64_t rows = hi - r0 < tiling_.epilogue_rows ? hi - r0 : tiling_.epilogue_rows;",
        "      const int64_t n = rows * pitch;",
        "      const int64_t at = (row0 + r0) * tiling_.n + n0;",
        *("      " + ln for ln in body),
        "    }",
        "    CrossCoreSetFlag<2, PIPE_MTE3>(1);  // done with the tile: the AIC may queue the next",
        "  }",
    ])
    align = 32 // min(elem_bytes(v.type) for v in local)
    members.insert(0, f"static constexpr int64_t ALIGN = {align};  // elements in 32 bytes of the narrowest dtype")
    return members, init, method


def _mask_from_bytes(sig: KernelSignature, name: str, v: ir.Value, cls: str, local: dict[ir.Value, str]) -> list[str]:
    """Vector code that turns a bool input's bytes (0 / 1, as GM holds them) into the bit mask Select
    reads, in place in its UB buffer: Cast to half (in the first select's result buffer, free until
    that select writes it), then CompareScalar != 0."""
    users = [u.owner for u in v.uses]
    selects = [o for o in users if o.name == "ascend.select" and o.operands[0] == v]
    if cls != "full" or not selects or len(selects) != len(users) or elem_bytes(selects[0].results[0].type) < 2:
        raise CodegenError(f"ERR03007 GRAPH kernel @{sig.name}: an epilogue reads bool input {name} other than as "
                           "a full-tile Select mask")
    scratch = f"{local[selects[0].results[0]]}.ReinterpretCast<half>()"
    return [f"Cast({scratch}, {name}, RoundMode::CAST_NONE, n);  // bool bytes (0 / 1) -> half",
            f"CompareScalar({name}, {scratch}, half(0), CMPMODE::NE, n);  // -> the bit mask Select reads"]


def _other_inputs(kernel: ir.Operation, sig: KernelSignature) -> list[tuple[str, ir.Value]]:
    """The kernel's tensor arguments the epilogue reads: all but the matmul's operands."""
    operands = cube_sources(analyze(kernel).cube_op)
    return [(n, v) for n, v in sig.inputs if v not in operands]


def _vector_part(kernel: ir.Operation) -> tuple[ir.Value, list[ir.Operation]]:
    """(the value Fixpipe writes, the vector ops that follow it on the AIVs)."""
    op = analyze(kernel).cube_op
    return _fixpipe_value(op, epilogue_ops(kernel))


def is_mix(kernel: ir.Operation) -> bool:
    """Whether the cube kernel has a vector epilogue, i.e. runs as 1 AIC : 2 AIV groups (MIX_MODE)."""
    return bool(_vector_part(kernel)[1])


def _staged(kernel: ir.Operation, fixed: ir.Value, ops: list[ir.Operation]) -> bool:
    """Whether the epilogue cannot run in place on the result Fixpipe writes: the kernel has several
    results, or Fixpipe's dtype is not the result's."""
    results = list(list(kernel.regions[0].blocks[0].operations)[-1].operands)
    return bool(ops) and (len(results) != 1 or ctype(results[0].type) != ctype(fixed.type))


def workspace_bytes(kernel: ir.Operation) -> int:
    """GM bytes of the kernel's `workspace` argument (0: it takes none): one base_m x base_n tile
    of Fixpipe's output per AIC, which the group's AIVs read before the AIC writes the next one."""
    fixed, ops = _vector_part(kernel)
    if not _staged(kernel, fixed, ops):
        return 0
    record = ir.DictAttr(kernel.attributes["tiling"])
    tile = ir.IntegerAttr(record["base_m"]).value * ir.IntegerAttr(record["base_n"]).value
    return ir.IntegerAttr(kernel.attributes["block_dim"]).value * tile * elem_bytes(fixed.type)


def emit(kernel: ir.Operation, sig: KernelSignature) -> str:
    op = analyze(kernel).cube_op
    _check(op, sig)
    a, b = cube_sources(op)
    gm_name = {v: n for n, v in sig.inputs}
    if a not in gm_name or b not in gm_name:
        raise CodegenError(f"ERR03007 GRAPH kernel @{sig.name}: the matmul operands must be kernel arguments")
    fixed, ops = _vector_part(kernel)
    t = ctype(a.type)
    if not ops and [v for _, v in sig.outputs] != [fixed]:
        raise CodegenError(f"ERR03007 GRAPH kernel @{sig.name}: its result is not the matmul's")
    staged = _staged(kernel, fixed, ops)
    if staged != bool(sig.workspace):
        raise CodegenError(f"ERR03007 GRAPH kernel @{sig.name}: its signature (emit.signature) disagrees on the "
                           "epilogue workspace")
    members, init, method = _epilogue(kernel, sig, fixed, ops, staged) if ops else ([], [], "")
    out_t = ctype(fixed.type)
    # Fixpipe writes the output tile in place, or this AIC's tile of the workspace.
    fix_gm, fix_buf = ("wsGm", "workspace") if staged else ("cGm", "out0")
    fix_dst = ("wsGm[GetBlockIdx() * tiling_.base_m * tiling_.base_n]" if staged
               else "cGm[bt * tiling_.m * tiling_.n + tm * tiling_.base_m * tiling_.n + tn * tiling_.base_n]")
    fix_stride = "tiling_.base_n" if staged else "tiling_.n"
    if elem_bytes(a.type) not in (2, 4) or t != ctype(b.type):
        raise CodegenError(f"ERR03007 GRAPH kernel @{sig.name}: cube operands must both be fp16, bf16 or fp32")
    ta, tb = _flag(op, "transpose_a"), _flag(op, "transpose_b")
    wide = elem_bytes(a.type) == 4
    copy_a, copy_b = _nz_copies(ta, tb, tensor_format(a.type) == "FRACTAL_NZ", tensor_format(b.type) == "FRACTAL_NZ",
                                _copies(ta, tb, wide), wide)
    split_a, split_b = _splits(ta, tb, wide)
    block_arg = "block, " if staged else ""
    epilogue_call = (f"\n      if ASCEND_IS_AIV {{\n        Epilogue({block_arg}bt * tiling_.m + tm * tiling_.base_m, "
                     "tn * tiling_.base_n, mLen, nLen);\n      }" if ops else "")
    back_pressure = ("\n        if (done > 0) CrossCoreWaitFlag<2, PIPE_FIX>(1);  // both AIVs are done with the last tile"
                     if ops else "")
    task_type = "KERNEL_TYPE_MIX_AIC_1_2" if ops else "KERNEL_TYPE_AIC_ONLY"
    aiv_init = ("    if ASCEND_IS_AIV {\n" + "".join("      " + ln + "\n" for ln in init) + "    }\n") if init else ""
    cross_core = "\n    CrossCoreSetFlag<0x2, PIPE_FIX>(0);  // tell the AIV side the tile is in GM" if ops else ""
    quant = _QUANT.get(out_t)
    if quant is None:
        raise CodegenError(f"ERR03007 GRAPH kernel @{sig.name}: Fixpipe cannot write {out_t}")
    return f"""class Kernel_{sig.name} {{
 public:
  static constexpr int64_t C0 = 32 / sizeof({t});     // fractal columns
  static constexpr int64_t FRAC = 512 / sizeof({t});  // elements of one fractal

  __aicore__ inline void Init({", ".join(f"GM_ADDR {p}" for p in sig.gm_params)}, const {sig.name}_TilingData& t) {{
    KERNEL_TASK_TYPE_DEFAULT({task_type});
    tiling_ = t;
    aGm.SetGlobalBuffer(reinterpret_cast<__gm__ {t}*>({gm_name[a]}));
    bGm.SetGlobalBuffer(reinterpret_cast<__gm__ {t}*>({gm_name[b]}));
    {fix_gm}.SetGlobalBuffer(reinterpret_cast<__gm__ {out_t}*>({fix_buf}));
    if ASCEND_IS_AIC {{
      const int64_t m16 = Up16(t.base_m), n16 = Up16(t.base_n), k16 = Up16(t.base_k);
      pipe.InitBuffer(a1Que, BUFFER_NUM, m16 * k16 * sizeof({t}));
      pipe.InitBuffer(b1Que, BUFFER_NUM, k16 * n16 * sizeof({t}));
      pipe.InitBuffer(a2Que, BUFFER_NUM, m16 * k16 * sizeof({t}));
      pipe.InitBuffer(b2Que, BUFFER_NUM, k16 * n16 * sizeof({t}));
      pipe.InitBuffer(c1Que, 1, m16 * n16 * sizeof(float));
    }}
{aiv_init}  }}
  __aicore__ inline void Process() {{
    // The tiles are dealt over the cube cores; an AIV works on its group's AIC's tiles.
    const int64_t block = ASCEND_IS_AIV ? GetBlockIdx() / GetTaskRatio() : GetBlockIdx();
    const int64_t perBatch = tiling_.tiles_m * tiling_.tiles_n;
    int64_t done = 0;
    for (int64_t tile = block; tile < tiling_.batch * perBatch; tile += GetBlockNum(), ++done) {{
      const int64_t bt = tile / perBatch, tm = tile % perBatch / tiling_.tiles_n, tn = tile % tiling_.tiles_n;
      const int64_t mLen = tm == tiling_.tiles_m - 1 ? tiling_.tail_m : tiling_.base_m;
      const int64_t nLen = tn == tiling_.tiles_n - 1 ? tiling_.tail_n : tiling_.base_n;
      if ASCEND_IS_AIC {{
        LocalTensor<float> c = c1Que.AllocTensor<float>();
        for (int64_t kt = 0; kt < tiling_.k_tiles; ++kt) {{
          const int64_t kLen = kt == tiling_.k_tiles - 1 ? tiling_.tail_k : tiling_.base_k;
          CopyIn(bt, tm, tn, kt, mLen, nLen, kLen);
          SplitLoad(mLen, nLen, kLen);
          Compute(c, mLen, nLen, kLen, kt == 0);
        }}
        c1Que.EnQue(c);{back_pressure}
        CopyOut(bt, tm, tn, mLen, nLen);
      }}{epilogue_call}
    }}
    (void)done;
  }}

 private:
  static __aicore__ inline int64_t Up16(int64_t x) {{ return (x + 15) / 16 * 16; }}

  __aicore__ inline void CopyIn(int64_t bt, int64_t tm, int64_t tn, int64_t kt, int64_t mLen, int64_t nLen,
                                int64_t kLen) {{
    const int64_t m = tiling_.m, n = tiling_.n, k = tiling_.k;
    LocalTensor<{t}> a1 = a1Que.AllocTensor<{t}>();
    LocalTensor<{t}> b1 = b1Que.AllocTensor<{t}>();
    if (kLen % 16 != 0) {{  // K padding is multiplied: it must be zero
      InitConstValue(a1, InitConstValueParams<{t}>(static_cast<uint16_t>(Up16(mLen) * Up16(kLen) / FRAC), 16, 0, {t}(0)));
      InitConstValue(b1, InitConstValueParams<{t}>(static_cast<uint16_t>(Up16(kLen) * Up16(nLen) / FRAC), 16, 0, {t}(0)));
    }}
    {copy_a}
    {copy_b}
    a1Que.EnQue(a1);
    b1Que.EnQue(b1);
  }}
  __aicore__ inline void SplitLoad(int64_t mLen, int64_t nLen, int64_t kLen) {{
    LocalTensor<{t}> a1 = a1Que.DeQue<{t}>();
    LocalTensor<{t}> b1 = b1Que.DeQue<{t}>();
    LocalTensor<{t}> a2 = a2Que.AllocTensor<{t}>();
    LocalTensor<{t}> b2 = b2Que.AllocTensor<{t}>();
    // Fractal counts: m and n in 16s, k in C0s over the 16-padded depth Mmad is given (L0A rows hold
    // k1 fractals, as Mmad reads them; an even count for fp32, whose transposing loads write pairs).
    const int64_t m1 = Up16(mLen) / 16, k1 = Up16(kLen) / C0, kb16 = Up16(kLen) / 16, n1 = Up16(nLen) / 16;
    (void)kb16;
    {split_a}
    {split_b}
    a2Que.EnQue(a2);
    b2Que.EnQue(b2);
    a1Que.FreeTensor(a1);
    b1Que.FreeTensor(b1);
  }}
  __aicore__ inline void Compute(const LocalTensor<float>& c, int64_t mLen, int64_t nLen, int64_t kLen, bool init) {{
    LocalTensor<{t}> a2 = a2Que.DeQue<{t}>();
    LocalTensor<{t}> b2 = b2Que.DeQue<{t}>();
    // MmadParams(m, n, k, unitFlag, cmatrixSource, cmatrixInitVal): init starts C from zero.
    Mmad(c, a2, b2, MmadParams(static_cast<uint16_t>(mLen), static_cast<uint16_t>(nLen), static_cast<uint16_t>(Up16(kLen)), 0,
                               false, init));
    a2Que.FreeTensor(a2);
    b2Que.FreeTensor(b2);
  }}
  __aicore__ inline void CopyOut(int64_t bt, int64_t tm, int64_t tn, int64_t mLen, int64_t nLen) {{
    LocalTensor<float> c = c1Que.DeQue<float>();
    // FixpipeParamsV220(nSize, mSize, srcStride, dstStride, reluEn): L0C NZ -> GM ND rows.
    FixpipeParamsV220 p(static_cast<uint16_t>(nLen), static_cast<uint16_t>(mLen), static_cast<uint16_t>(Up16(mLen)),
                        static_cast<uint32_t>({fix_stride}), false);
    p.quantPre = {quant};
    Fixpipe({fix_dst}, c, p);
    c1Que.FreeTensor(c);{cross_core}
  }}
{method}

  TPipe pipe;
  TQue<QuePosition::A1, BUFFER_NUM> a1Que;
  TQue<QuePosition::B1, BUFFER_NUM> b1Que;
  TQue<QuePosition::A2, BUFFER_NUM> a2Que;
  TQue<QuePosition::B2, BUFFER_NUM> b2Que;
  TQue<QuePosition::CO1, 1> c1Que;
  GlobalTensor<{t}> aGm, bGm;
  GlobalTensor<{out_t}> {fix_gm};
{"".join("  " + ln + chr(10) for ln in members)}  {sig.name}_TilingData tiling_;
}};
"""
