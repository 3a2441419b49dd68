"""Widen a half-precision contraction's operands to f32 once, before the register tiles read them.

A matmul of f16 (or bf16) inputs accumulates in f32: linalg writes it as a contraction whose body
widens each element (`arith.extf`). Left in the body, the widening runs inside the register tile
for every K step: the 8 A values of a step are scalar loads widened one by one (f16: `vpinsrw` into
an xmm register, `vcvtph2ps`, `vbroadcastss`), where an f32 tile folds the broadcast into its FMAs.
LLVM picks for `vpinsrw`'s merge operand a register that holds an accumulator, so every step's A
loads wait on the previous step's last FMA: the loop runs at the latency of that chain (1024^3 f16
59.8 ms against 29.4 ms f32, this machine, 2 blocks).

Here each such operand is widened by an elementwise op of its own (an f32 panel: F16C's
`vcvtph2ps` on 16 lanes at a time) and the contraction reads the panel as an f32 one. The block
split fuses the widening into each block's slice: a block widens its own rows of A and all of B,
K x N conversions per block against M x N x K FMAs. bf16 contractions on the vdpbf16ps path
(bf16_dot.py) keep their bf16 operands: that instruction reads them as they are.

The same copy packs an operand whose elements along the register tile's lanes (the output's last
loop) are not adjacent in memory, such as nn.Linear's weight.t(): read in place, every 16-lane row
of B is a gather (f32 128x384 @ 384x128 with B transposed: 0.80 ms against 0.08 ms contiguous, one
thread); packed once per block, it costs K x N copies against M x N x K FMAs.
"""

from __future__ import annotations

import math
from dataclasses import replace

from torch_mlir import ir
from torch_mlir.dialects import arith, bufferization, linalg, memref, tensor

from npu_mlir.targets.sim import bf16_dot
from npu_mlir.targets.sim.schedule import PACKED_ATTR, loop_nest, remainder_splits, ub_tile_sizes

HALF_TYPES = ("f16", "bf16")
# Largest operand widened whole (elements): each block holds its panel of the f32 copy as scratch
# (scratch.py keeps it between launches), so a 4096 x 25088 f16 weight would cost 400 MB per block.
# Larger operands keep the widening in the register tile: slower, in bounded memory.
MAX_WIDENED_ELEMENTS = 16 << 20


def _widened_arguments(op: ir.Operation) -> list[int]:
    """Input positions whose block argument is half precision and only widened to f32."""
    block = op.regions[0].blocks[0]
    inputs = len(op.operands) - len(op.results)
    found = []
    for i, arg in enumerate(list(block.arguments)[:inputs]):
        uses = list(arg.uses)
        operand = op.operands[i].type
        if not isinstance(operand, ir.RankedTensorType):
            continue
        if (str(arg.type) in HALF_TYPES and math.prod(operand.shape) <= MAX_WIDENED_ELEMENTS and uses
                and all(u.owner.name == "arith.extf" for u in uses)
                and all(str(u.owner.results[0].type) == "f32" for u in uses)):
            found.append(i)
    return found


def _memory_order(buffer: ir.MemRefType) -> list[int] | None:
    """The dims of a strided memref from outermost to innermost in memory, when it is a permutation
    of a row-major buffer (a transposed view); None otherwise."""
    strides, _ = buffer.get_strides_and_offset()
    order = sorted(range(buffer.rank), key=lambda d: -strides[d])
    expected = 1
    for d in reversed(order):
        if buffer.shape[d] != 1 and strides[d] != expected:
            return None
        expected *= buffer.shape[d]
    return order


def _strided_lane_arguments(op: ir.Operation) -> list[int]:
    """Input positions read straight from a transposed argument whose elements along the output's
    last loop are not adjacent."""
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    lane = maps[-1].results[-1] if maps[-1].results else None
    inputs = len(op.operands) - len(op.results)
    found = []
    for i in range(inputs):
        source = op.operands[i].owner
        if isinstance(source, ir.Block) or source.operation.name != "bufferization.to_tensor":
            continue
        buffer = ir.MemRefType(source.operands[0].type)
        strides, _ = buffer.get_strides_and_offset()
        for dim, expr in enumerate(maps[i].results):
            if (expr == lane and strides[dim] != 1 and buffer.shape[dim] > 1 and _memory_order(buffer)
                    and math.prod(buffer.shape) <= MAX_WIDENED_ELEMENTS):
                found.append(i)
    return found


def _on_dot_path(op: ir.Operation) -> bool:
    """The bf16 register tiles schedule.tile_and_vectorize hands to vdpbf16ps (same test, on the
    main part schedule.remainder_splits leaves: N in whole 16-lane rows, K even)."""
    if not bf16_dot.pairs_k(op):
        return False
    nest = loop_nest(op)
    parts = dict(remainder_splits(nest, pairs=True))
    columns, k = parts.get(len(nest.ranges) - 2, nest.ranges[-2]), parts.get(len(nest.ranges) - 1, nest.ranges[-1])
    columns = ub_tile_sizes(replace(nest, ranges=nest.ranges[:-2] + (columns, k)))[-2] or columns
    return k % 2 == 0 and k > 2 and columns % bf16_dot.LANES == 0


def _candidates(func: ir.Operation, pack: bool) -> list[tuple[ir.Operation, list[int]]]:
    found = []

    def visit(op):
        if op.name == "linalg.generic" and len(op.results) == 1:
            nest = loop_nest(op)
            if nest is not None and nest.is_contraction and min(nest.ranges, default=1) > 0:
                if pack:
                    positions = _strided_lane_arguments(op)
                else:
                    positions = _widened_arguments(op) if not _on_dot_path(op) else []
                if positions:
                    found.append((op, positions))
        return ir.WalkResult.ADVANCE

    func.walk(visit)
    return found


def _widen(value: ir.Value) -> ir.Value:
    """An elementwise linalg.generic: value (a half tensor) as f32."""
    source = ir.RankedTensorType(value.type)
    f32 = ir.F32Type.get()
    wide = ir.RankedTensorType.get(list(source.shape), f32)
    identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(source.rank))
    init = tensor.EmptyOp(list(source.shape), f32).result
    op = linalg.GenericOp([wide], [value], [init], ir.ArrayAttr.get([identity, identity]),
                          ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * source.rank))
    block = op.regions[0].blocks.append(source.element_type, f32)
    with ir.InsertionPoint(block):
        linalg.YieldOp([arith.ExtFOp(f32, block.arguments[0]).result])
    return op.result


def _pack(value: ir.Value) -> ir.Value:
    """A row-major copy of a transposed argument's tensor, read in its memory order: an identity
    copy of the strided tensor would be folded away by canonicalization."""
    source = ir.MemRefType(value.owner.operands[0].type)
    order = _memory_order(source)
    strides, offset = source.get_strides_and_offset()
    stored = ir.MemRefType.get([source.shape[d] for d in order], source.element_type,
                               layout=ir.StridedLayoutAttr.get(offset, [strides[d] for d in order]))
    view = memref.TransposeOp(stored, value.owner.operands[0], ir.AffineMap.get_permutation(order)).result
    buffer = bufferization.ToTensorOp(ir.RankedTensorType.get(stored.shape, source.element_type), view,
                                      restrict=True).result
    result = ir.RankedTensorType(value.type)
    init = tensor.EmptyOp(list(result.shape), result.element_type).result
    maps = [ir.AffineMap.get(source.rank, 0, [ir.AffineDimExpr.get(d) for d in order]),
            ir.AffineMap.get_identity(source.rank)]
    op = linalg.GenericOp([result], [buffer], [init], ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                          ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * source.rank))
    op.operation.attributes[PACKED_ATTR] = ir.UnitAttr.get()
    block = op.regions[0].blocks.append(result.element_type, result.element_type)
    with ir.InsertionPoint(block):
        linalg.YieldOp([block.arguments[0]])
    return op.result


def _rewrite(op: ir.Operation, positions: list[int], widen: bool) -> None:
    f32 = ir.F32Type.get()
    operands = list(op.operands)
    inputs = len(operands) - len(op.results)
    with ir.InsertionPoint(op), op.location:
        for i in positions:
            operands[i] = _widen(operands[i]) if widen else _pack(operands[i])
        new = linalg.GenericOp([r.type for r in op.results], operands[:inputs], operands[inputs:],
                               op.attributes["indexing_maps"], op.attributes["iterator_types"])
    old_block = op.regions[0].blocks[0]
    types = [f32 if widen and i in positions else a.type for i, a in enumerate(old_block.arguments)]
    block = new.regions[0].blocks.append(*types)
    widenings = []
    for i, (old_arg, new_arg) in enumerate(zip(old_block.arguments, block.arguments)):
        if widen and i in positions:
            for use in list(old_arg.uses):
                widenings.append(use.owner)
                use.owner.results[0].replace_all_uses_with(new_arg)
        else:
            old_arg.replace_all_uses_with(new_arg)
    for extf in widenings:
        extf.erase()
    for inner in list(old_block.operations):
        block.append(inner)
    op.results[0].replace_all_uses_with(new.result)
    op.erase()


def widen_half_operands(func: ir.Operation) -> int:
    """Rewrite every matching contraction of func (see the module doc); returns how many."""
    found = _candidates(func, pack=False)
    for op, positions in found:
        _rewrite(op, positions, widen=True)
    return len(found)


def pack_strided_operands(func: ir.Operation) -> int:
    """Copy each contraction operand whose lanes are strided to a row-major tensor (see the module
    doc), after widen_half_operands (a widened operand is row-major already); returns how many."""
    found = _candidates(func, pack=True)
    for op, positions in found:
        _rewrite(op, positions, widen=False)
    return len(found)


def run(module: ir.Operation) -> bool:
    """The registered pass (sim-widen-panels): in every func.func of `module`, widen_half_operands
    then pack_strided_operands, as lowering.schedule runs them before the block split."""
    funcs = [op.operation for op in module.regions[0].blocks[0].operations if op.operation.name == "func.func"]
    for func in funcs:
        widen_half_operands(func)
        pack_strided_operands(func)
    return True
