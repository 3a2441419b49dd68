"""Named linalg ops for ascend-raise-linalg: matmul, batch_matmul, conv2d, transpose, broadcast.

A 2-D transpose feeding a matmul operand folds into transpose_a/transpose_b (torch's linear
transposes its weight), because the cube unit reads transposed fractals for free. torch-mlir
pads conv inputs with an explicit tensor.pad and seeds the output with the broadcast bias; both
fold back into ascend.conv2d's padding and bias. Any other non-zero init is added afterwards.
"""

from torch_mlir import ir, rewrite
from torch_mlir.dialects import tensor

from ..dialects.ascend import BatchMatmulOp, BinaryOp, BroadcastOp, Conv2dOp, MatmulOp, TransposeOp
from .raise_linalg_body import is_zero_constant


def _is_zero_fill(v: ir.Value) -> bool:
    fill = v.owner
    return isinstance(fill, ir.OpView) and fill.operation.name == "linalg.fill" and is_zero_constant(fill.operands[0])


def _acc_type(elt: ir.Type) -> ir.TypeAttr:
    acc = ir.F32Type.get() if isinstance(elt, ir.FloatType) else ir.IntegerType.get_signless(32)
    return ir.TypeAttr.get(acc)


def _untransposed(v: ir.Value) -> tuple[ir.Value, bool]:
    """(x, True) when `v` is a [1, 0] transpose of x, else (v, False)."""
    t = v.owner
    if isinstance(t, ir.OpView) and t.operation.name in ("linalg.transpose", "ascend.transpose"):
        if list(ir.DenseI64ArrayAttr(t.attributes["permutation"])) == [1, 0]:
            return t.operands[0], True
    return v, False


def _plus_init(result: ir.Value, init: ir.Value) -> ir.Value:
    if _is_zero_fill(init):
        return result
    return BinaryOp(result, init, ir.StringAttr.get("add"), result.type).result


# The plain (untransposed, unbroadcast) maps; other indexing_maps variants are not raised.
DEFAULT_MAPS = {
    "linalg.matmul": "[affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, "
                     "affine_map<(d0, d1, d2) -> (d0, d1)>]",
    "linalg.batch_matmul": "[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> "
                           "(d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]",
}


def _matmul(op: ir.OpView, rewriter: rewrite.PatternRewriter, cls: type, fold_transposes: bool) -> bool:
    name = op.operation.name
    if "indexing_maps" in op.attributes and str(op.attributes["indexing_maps"]) != DEFAULT_MAPS[name]:
        return True
    (a, b), init = list(op.inputs), op.outputs[0]
    ta = tb = False
    if fold_transposes:
        (a, ta), (b, tb) = _untransposed(a), _untransposed(b)
    with rewriter.ip, op.location:
        mm = cls(a, b, _acc_type(a.type.element_type), op.results[0].type,
                 transpose_a=ir.BoolAttr.get(ta), transpose_b=ir.BoolAttr.get(tb))
        result = _plus_init(mm.result, init)
    rewriter.replace_op(op, [result])
    return False


def raise_matmul(op: ir.OpView, rewriter: rewrite.PatternRewriter) -> bool:
    return _matmul(op, rewriter, MatmulOp, fold_transposes=True)


def raise_batch_matmul(op: ir.OpView, rewriter: rewrite.PatternRewriter) -> bool:
    return _matmul(op, rewriter, BatchMatmulOp, fold_transposes=False)


def _unpadded(x: ir.Value) -> tuple[ir.Value, list[int]]:
    """Fold a symmetric zero tensor.pad of H and W into conv padding."""
    pad = x.owner
    if not isinstance(pad, ir.OpView) or pad.operation.name != "tensor.pad" or len(list(pad.operands)) != 1:
        return x, [0, 0]
    low = list(ir.DenseI64ArrayAttr(pad.attributes["static_low"]))
    high = list(ir.DenseI64ArrayAttr(pad.attributes["static_high"]))
    body = pad.regions[0].blocks[0]
    value = list(body.operations)[-1].operands[0]
    if low != high or low[:2] != [0, 0] or not is_zero_constant(value):
        return x, [0, 0]
    return pad.operands[0], low[2:]


def _bias(init: ir.Value, channels: int) -> ir.Value | None:
    b = init.owner
    if isinstance(b, ir.OpView) and b.operation.name == "linalg.broadcast":
        if list(ir.DenseI64ArrayAttr(b.attributes["dimensions"])) == [0, 2, 3] and b.operands[0].type.shape == [channels]:
            return b.operands[0]
    return None


def raise_conv(op: ir.OpView, rewriter: rewrite.PatternRewriter) -> bool:
    (x, w), init = list(op.inputs), op.outputs[0]
    x, padding = _unpadded(x)
    ints = lambda name: ir.DenseI64ArrayAttr.get([int(v) for v in ir.DenseIntElementsAttr(op.attributes[name])])
    bias = _bias(init, w.type.shape[0])
    with rewriter.ip, op.location:
        i64 = ir.IntegerType.get_signless(64)
        conv = Conv2dOp(x, w, ints("strides"), ir.DenseI64ArrayAttr.get(padding), ints("dilations"),
                        ir.IntegerAttr.get(i64, 1), op.results[0].type, bias=bias)
        result = conv.result if bias is not None else _plus_init(conv.result, init)
    rewriter.replace_op(op, [result])
    return False


def _unit_dim_groups(shape: list[int]) -> list[list[int]]:
    """Reassociation merging each unit dim into the next other dim (trailing ones into the last)."""
    groups, pending = [], []
    for i, size in enumerate(shape):
        pending.append(i)
        if size != 1:
            groups.append(pending)
            pending = []
    if groups:
        groups[-1].extend(pending)
    return groups


def _reassociation(groups: list[list[int]]) -> ir.ArrayAttr:
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, d) for d in g]) for g in groups])


def raise_named_transpose(op: ir.OpView, rewriter: rewrite.PatternRewriter) -> bool:
    x, result_type = op.operands[0], ir.RankedTensorType(op.results[0].type)
    src = list(ir.RankedTensorType(x.type).shape)
    perm = list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
    moved = [p for p in perm if src[p] != 1]
    with rewriter.ip, op.location:
        if moved == sorted(moved) and moved:
            # Only unit dims move (torch's einsum permutes them): a reshape, a host view, no kernel.
            squeezed = ir.RankedTensorType.get([s for s in src if s != 1], result_type.element_type)
            flat = tensor.CollapseShapeOp(squeezed, x, _reassociation(_unit_dim_groups(src))).result
            shape = list(result_type.shape)
            result = tensor.ExpandShapeOp(result_type, flat, _reassociation(_unit_dim_groups(shape)), [], shape).result
        else:
            result = TransposeOp(x, op.attributes["permutation"], result_type).result
    rewriter.replace_op(op, [result])
    return False


def raise_named_broadcast(op: ir.OpView, rewriter: rewrite.PatternRewriter) -> bool:
    with rewriter.ip, op.location:
        b = BroadcastOp(op.operands[0], op.attributes["dimensions"], op.results[0].type)
    rewriter.replace_op(op, [b.result])
    return False
