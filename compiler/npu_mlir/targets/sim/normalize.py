"""Rewrite keepdim reductions so the block split can slice them.

torch-mlir writes `x.sum(-1, keepdim=True)` as a linalg.generic whose output map has a constant
(`(d0, d1) -> (d0, 0)` into a tensor<Mx1>). Tiling cannot invert a constant result, so fusing such
a reduction into a block's slice clones it whole: every block recomputes the full reduction (48
times the work for softmax or layer norm on 48 blocks). Here the size-1 dim is dropped from the
output (`-> (d0)` into tensor<M>) and restored by a tensor.expand_shape after the op.
The sim's lowering runs it on every kernel; `npu-opt --sim-normalize` runs it alone.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import linalg, tensor


def _constant_unit_dims(amap: ir.AffineMap, shape: list[int]) -> list[int]:
    return [i for i, e in enumerate(amap.results) if isinstance(e, ir.AffineConstantExpr) and shape[i] == 1]


def _candidates(module: ir.Operation) -> list[ir.Operation]:
    found = []

    def visit(op):
        if op.name == "linalg.generic" and len(op.results) == 1:
            maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
            out_type = op.results[0].type
            if isinstance(out_type, ir.RankedTensorType) and _constant_unit_dims(maps[-1], list(out_type.shape)) \
                    and len(_constant_unit_dims(maps[-1], list(out_type.shape))) < out_type.rank:
                found.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return found


def _reassociation(rank: int, dropped: list[int]) -> ir.ArrayAttr:
    """Groups mapping the collapsed dims to the full ones; each dropped dim joins a neighbour."""
    groups, pending = [], []
    for i in range(rank):
        pending.append(i)
        if i not in dropped:
            groups.append(pending)
            pending = []
    groups[-1].extend(pending)
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g]) for g in groups])


def _rewrite(op: ir.Operation) -> None:
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    out_type = ir.RankedTensorType(op.results[0].type)
    shape = list(out_type.shape)
    dropped = _constant_unit_dims(maps[-1], shape)
    kept_shape = [s for i, s in enumerate(shape) if i not in dropped]
    reassoc = _reassociation(len(shape), dropped)
    out_map = ir.AffineMap.get(maps[-1].n_dims, maps[-1].n_symbols,
                               [e for i, e in enumerate(maps[-1].results) if i not in dropped])
    collapsed_type = ir.RankedTensorType.get(kept_shape, out_type.element_type)
    init = op.operands[len(op.operands) - 1]
    with ir.InsertionPoint(op), op.location:
        collapsed = tensor.CollapseShapeOp(collapsed_type, init, reassoc).result
        new = linalg.GenericOp([collapsed_type], list(op.operands)[:-1], [collapsed],
                               ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps[:-1] + [out_map]]),
                               op.attributes["iterator_types"])
        old_block = op.regions[0].blocks[0]
        block = new.regions[0].blocks.append(*[a.type for a in old_block.arguments])
        for old_arg, new_arg in zip(old_block.arguments, block.arguments):
            old_arg.replace_all_uses_with(new_arg)
        for inner in list(old_block.operations):
            block.append(inner)
    with ir.InsertionPoint.after(new.operation), op.location:
        expanded = tensor.ExpandShapeOp(out_type, new.result, reassoc, [], shape).result
    op.results[0].replace_all_uses_with(expanded)
    op.erase()


def _rewrite_all(module: ir.Operation) -> None:
    for op in _candidates(module):
        _rewrite(op)


def drop_constant_output_dims(module: ir.Module) -> None:
    _rewrite_all(module.operation)


def run(module: ir.Operation) -> bool:
    """The registered pass (sim-normalize): `drop_constant_output_dims` on a builtin.module."""
    _rewrite_all(module)
    return True
