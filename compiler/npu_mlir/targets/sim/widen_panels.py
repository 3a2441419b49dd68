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
"""

from __future__ import annotations

import math
from dataclasses import replace

from torch_mlir import ir
from torch_mlir.dialects import arith, linalg, tensor

from npu_mlir.targets.sim import bf16_dot
from npu_mlir.targets.sim.schedule import loop_nest, remainder_splits, ub_tile_sizes

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


def _candidates(func: ir.Operation) -> list[tuple[ir.Operation, list[int]]]:
    found = []

    def visit(op):
        if op.name == "linalg.generic" and len(op.results) == 1:
            nest = loop_nest(op)
            if nest is not None and nest.is_contraction and min(nest.ranges, default=1) > 0:
                positions = _widened_arguments(op)
                if positions and not _on_dot_path(op):
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


def _rewrite(op: ir.Operation, positions: list[int]) -> None:
    f32 = ir.F32Type.get()
    operands = list(op.operands)
    inputs = len(operands) - len(op.results)
    with ir.InsertionPoint(op), op.location:
        for i in positions:
            operands[i] = _widen(operands[i])
        new = linalg.GenericOp([r.type for r in op.results], operands[:inputs], operands[inputs:],
                               op.attributes["indexing_maps"], op.attributes["iterator_types"])
    old_block = op.regions[0].blocks[0]
    types = [f32 if i in positions else a.type for i, a in enumerate(old_block.arguments)]
    block = new.regions[0].blocks.append(*types)
    widenings = []
    for i, (old_arg, new_arg) in enumerate(zip(old_block.arguments, block.arguments)):
        if i in positions:
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
    found = _candidates(func)
    for op, positions in found:
        _rewrite(op, positions)
    return len(found)
