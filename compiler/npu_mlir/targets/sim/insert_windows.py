"""The tensor.insert_slice ops the linalg vectorizer writes wrongly, as a select over a window.

vectorize_children_and_apply_patterns (the sim's schedule) vectorizes a tensor.insert_slice into a
transfer_read of the source and a transfer_write into the destination, and gets two kinds wrong,
silently:
- a non-unit stride is written as 1: the backward of x[..., ::2] (slice_scatter with a step, as
  torch.compile graphs hold it) came back packed into the first half;
- a source whose innermost dim is 1 where the destination's is not (a column: the backward of
  torch.cat([x, x[..., :1]], -1)) is written along a row.
Each such insert becomes

    %w = tensor.extract_slice %dst[w0][W][1]    the window the insert writes into, unit strides
    %g = linalg.generic ins(%src) outs(%w)      src where the window position is on the insert's
                                                grid (d mod s == 0; the column's index), else %w
    tensor.insert_slice %g into %dst[w0][W][1]

where a unit innermost dim's window is widened to two elements (the neighbour keeps its value), so
neither slice is of a kind above. The source is read through d floordiv s (a constant 0 along a unit
dim), which keeps the generic from being vectorized: it runs as loops, and such inserts are small
next to the ops around them.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith, linalg, tensor

from npu_mlir.errors import SimCompileError


def _static(op: ir.Operation, name: str) -> list[int]:
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def _miswritten(op: ir.Operation) -> bool:
    """Whether the vectorizer would write this insert_slice wrongly (see the module docstring)."""
    if op.name != "tensor.insert_slice":
        return False
    sizes, dest = _static(op, "static_sizes"), ir.RankedTensorType(op.operands[1].type)
    column = dest.rank > 0 and sizes[-1] == 1 and dest.shape[-1] > 1
    return column or any(s != 1 for s in _static(op, "static_strides"))


def _full_rank_source(op: ir.Operation, sizes: list[int]) -> ir.Value:
    """The source with the unit dims a rank-reducing insert drops put back (each after its kept dim)."""
    source, dest = op.operands[0], ir.RankedTensorType(op.operands[1].type)
    shape = ir.RankedTensorType(source.type).shape
    if len(shape) == dest.rank:
        return source
    if len(shape) != sum(1 for n in sizes if n != 1) or 1 in shape:
        raise SimCompileError(f"a rank-reducing tensor.insert_slice the sim cannot build: {op}", code="ERR03005")
    kept = [k for k, n in enumerate(sizes) if n != 1]
    groups = [[] for _ in kept]
    for k in range(dest.rank):  # leading unit dims join the first kept dim, the others the one before them
        groups[max((j for j, dim in enumerate(kept) if dim <= k), default=0)].append(k)
    full = ir.RankedTensorType.get(sizes, dest.element_type)
    return tensor.ExpandShapeOp(full, source, ir.ArrayAttr.get(
        [ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IntegerType.get_signless(64), d) for d in g]) for g in groups]),
        [], ir.DenseI64ArrayAttr.get(sizes)).result


def _rewrite(op: ir.Operation) -> None:
    offsets, sizes, strides = _static(op, "static_offsets"), _static(op, "static_sizes"), _static(op, "static_strides")
    dest = op.operands[1]
    dest_type = ir.RankedTensorType(dest.type)
    if len(list(op.operands)) > 2 or ir.ShapedType.get_dynamic_size() in sizes + list(dest_type.shape):
        # torch-mlir gives the sim static slices only.
        raise SimCompileError(f"a dynamic tensor.insert_slice the sim cannot build: {op}", code="ERR03005")
    rank = dest_type.rank
    starts, window, shifts = list(offsets), [(n - 1) * s + 1 for n, s in zip(sizes, strides)], [0] * rank
    if window[-1] == 1 and dest_type.shape[-1] > 1:
        starts[-1] = min(offsets[-1], dest_type.shape[-1] - 2)
        shifts[-1], window[-1] = offsets[-1] - starts[-1], 2
    window_type = ir.RankedTensorType.get(window, dest_type.element_type)
    unit = ir.DenseI64ArrayAttr.get([1] * rank)
    reads = []
    for d, (n, s) in enumerate(zip(sizes, strides)):
        dim = ir.AffineDimExpr.get(d)
        reads.append(ir.AffineConstantExpr.get(0) if n == 1 else dim if s == 1
                     else ir.AffineFloorDivExpr.get(dim, ir.AffineConstantExpr.get(s)))
    index = ir.IndexType.get()
    with ir.InsertionPoint(op), op.location:
        source = _full_rank_source(op, sizes)
        region = tensor.ExtractSliceOp(window_type, dest, [], [], [], ir.DenseI64ArrayAttr.get(starts),
                                       ir.DenseI64ArrayAttr.get(window), unit).result
        generic = linalg.GenericOp([window_type], [source], [region],
                                   ir.ArrayAttr.get([ir.AffineMapAttr.get(ir.AffineMap.get(rank, 0, reads)),
                                                     ir.AffineMapAttr.get(ir.AffineMap.get_identity(rank))]),
                                   ir.ArrayAttr.get([ir.Attribute.parse("#linalg.iterator_type<parallel>")] * rank))
        block = generic.regions[0].blocks.append(ir.RankedTensorType(source.type).element_type, dest_type.element_type)
        with ir.InsertionPoint(block):
            on_grid = None
            for d, (n, s) in enumerate(zip(sizes, strides)):
                if window[d] == 1 or (s == 1 and shifts[d] == 0 and n == window[d]):
                    continue
                position = linalg.IndexOp(d).result
                if n == 1:  # the widened unit dim: the insert's one position in the window
                    hit = arith.CmpIOp(arith.CmpIPredicate.eq, position, arith.ConstantOp(index, shifts[d]).result).result
                else:
                    rest = arith.RemUIOp(position, arith.ConstantOp(index, s).result).result
                    hit = arith.CmpIOp(arith.CmpIPredicate.eq, rest, arith.ConstantOp(index, 0).result).result
                on_grid = hit if on_grid is None else arith.AndIOp(on_grid, hit).result
            value = block.arguments[0] if on_grid is None else \
                arith.SelectOp(on_grid, block.arguments[0], block.arguments[1]).result
            linalg.YieldOp([value])
        inserted = tensor.InsertSliceOp(generic.result, dest, [], [], [], ir.DenseI64ArrayAttr.get(starts),
                                        ir.DenseI64ArrayAttr.get(window), unit).result
    op.results[0].replace_all_uses_with(inserted)
    op.erase()


def window_miswritten_inserts(module: ir.Module | ir.Operation) -> int:
    """Rewrite every insert_slice of `module` the vectorizer would write wrongly; returns how many."""
    found = []

    def visit(op):
        if _miswritten(op):
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for op in found:
        _rewrite(op)
    return len(found)


def run(module: ir.Operation) -> bool:
    """The registered pass (sim-insert-windows): `window_miswritten_inserts` on `module`."""
    window_miswritten_inserts(module)
    return True
