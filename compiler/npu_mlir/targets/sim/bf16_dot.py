"""bf16 contractions on AVX512-BF16: the register tile's K pairs through vdpbf16ps.

A bf16 matmul accumulates in f32. Lowered as an f32 outer product, every K step widens the A
broadcasts and the B row (shift and bitcast of an i16) and issues one FMA per 16 products. With
AVX512-BF16 (`avx512_bf16` in /proc/cpuinfo: the compile worker builds for the host it runs on, as
the LLVM JIT does), vdpbf16ps multiplies 32 bf16 pairs and adds each adjacent pair's two products
into one of 16 f32 lanes: a register tile steps K by 2 and needs no widening at all.

schedule.tile_and_vectorize gives such a contraction a K tile of 2 (`pairs_k`); after vectorization
its vector.contract reads `extf(A [M, 2] bf16)` and `extf(B [2, N] bf16)` into an [M, N] f32
accumulator. `use_dot_products` rewrites it per row m and 16 columns: the A pair (A[m, k], A[m, k+1])
is one i32 broadcast to 16 lanes, the B rows k and k+1 are interleaved (B[k, n], B[k+1, n], ...),
and vdpbf16ps adds both products into acc[m, n]. The instruction is inline assembly on i16 vectors:
LLVM would otherwise hold bf16 vectors, which bf16_storage.py retypes to i16 only when nothing
computes on them. Its rounding differs from two f32 FMAs only in that it flushes denormals.
Contractions that do not match (odd K, transposed register tiles, N not a multiple of 16) keep the
f32 outer product.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import llvm, vector

from npu_mlir.hardware import host_cpu

LANES = 16  # f32 lanes of one zmm accumulator; its bf16 operand holds 2 x LANES values
AVAILABLE = "avx512_bf16" in host_cpu.flags()


def _widened_from_bf16(value: ir.Value) -> bool:
    return isinstance(value, ir.BlockArgument) and str(value.type) == "bf16"


def pairs_k(op: ir.Operation) -> bool:
    """Whether a contraction linalg.generic should step K by 2 for vdpbf16ps: AVX512-BF16 on the
    host, both inputs bf16 widened to f32 in the body, A read as [.., m, k] and B as [.., k, n]."""
    if not AVAILABLE or len(op.results) != 1 or str(ir.RankedTensorType(op.results[0].type).element_type) != "f32":
        return False
    body = op.regions[0].blocks[0]
    if len(body.arguments) != 3 or not all(_widened_from_bf16(a) for a in list(body.arguments)[:2]):
        return False
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    rank = maps[0].n_dims
    position = lambda amap: [e.position if isinstance(e, ir.AffineDimExpr) else -1 for e in amap.results]
    m, n, k = rank - 3, rank - 2, rank - 1
    return position(maps[0])[-2:] == [m, k] and position(maps[1])[-2:] == [k, n]


def _bf16_source(value: ir.Value, shape: list[int]) -> ir.Value | None:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.extf":
        return None
    source = owner.operands[0]
    if not isinstance(source.type, ir.VectorType):
        return None
    vt = ir.VectorType(source.type)
    return source if str(vt.element_type) == "bf16" and list(vt.shape) == shape else None


def _matches(contract: ir.Operation) -> tuple[ir.Value, ir.Value, int, int] | None:
    acc = contract.operands[2]
    if not isinstance(acc.type, ir.VectorType) or len(ir.VectorType(acc.type).shape) != 2:
        return None
    rows, cols = ir.VectorType(acc.type).shape
    if cols % LANES or str(ir.VectorType(acc.type).element_type) != "f32":
        return None
    maps = [str(ir.AffineMapAttr(a).value) for a in ir.ArrayAttr(contract.attributes["indexing_maps"])]
    if maps != ["(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d2, d1)", "(d0, d1, d2) -> (d0, d1)"]:
        return None
    a = _bf16_source(contract.operands[0], [rows, 2])
    b = _bf16_source(contract.operands[1], [2, cols])
    return None if a is None or b is None else (a, b, rows, cols)


def _dot(acc: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
    f32x16 = ir.VectorType.get([LANES], ir.F32Type.get())
    return llvm.InlineAsmOp(f32x16, [a, b, acc], "vdpbf16ps $2, $1, $0", "=v,v,v,0").result


def _rewrite(contract: ir.Operation, a: ir.Value, b: ir.Value, rows: int, cols: int) -> None:
    i16, i32, f32 = ir.IntegerType.get_signless(16), ir.IntegerType.get_signless(32), ir.F32Type.get()
    pairs = ir.VectorType.get([2 * LANES], i16)
    with ir.InsertionPoint(contract), contract.location:
        b_rows = [vector.BitCastOp(ir.VectorType.get([cols], i16),
                                   vector.ExtractOp(b, [], [r]).result).result for r in (0, 1)]
        # (B[k, n], B[k+1, n]) for n = 0 .. cols - 1, LANES columns per operand.
        mixed = vector.InterleaveOp(b_rows[0], b_rows[1]).result
        b_ops = [vector.ExtractStridedSliceOp(pairs, mixed, [2 * LANES * h], [2 * LANES], [1]).result
                 for h in range(cols // LANES)]
        out = contract.operands[2]
        for m in range(rows):
            a_pair = vector.BitCastOp(ir.VectorType.get([1], i32), vector.ExtractOp(a, [], [m]).result).result
            a_wide = vector.BroadcastOp(ir.VectorType.get([LANES], i32), vector.ExtractOp(a_pair, [], [0]).result)
            a_op = vector.BitCastOp(pairs, a_wide.result).result
            row = vector.ExtractOp(out, [], [m]).result
            for h, b_op in enumerate(b_ops):
                part = vector.ExtractStridedSliceOp(ir.VectorType.get([LANES], f32), row, [LANES * h], [LANES],
                                                    [1]).result
                row = vector.InsertStridedSliceOp(_dot(part, a_op, b_op), row, [LANES * h], [1]).result
            out = vector.InsertOp(row, out, [], [m]).result
    contract.results[0].replace_all_uses_with(out)
    contract.erase()


def use_dot_products(func: ir.Operation) -> int:
    """Rewrite every matching vector.contract of func (see the module doc); returns how many."""
    if not AVAILABLE:
        return 0
    found = []

    def visit(op):
        if op.name == "vector.contract":
            match = _matches(op)
            if match is not None:
                found.append((op, match))
        return ir.WalkResult.ADVANCE

    func.walk(visit)
    for op, match in found:
        _rewrite(op, *match)
    return len(found)
