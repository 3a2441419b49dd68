"""ascend-assign-formats: give cube operands the layouts the cube unit reads.

The cube unit consumes 16x16 (fp16) fractals, so matmul / batch_matmul operands are cast to
FRACTAL_NZ, and conv2d takes its input as NC1HWC0 and its weight as FRACTAL_Z (producing
NC1HWC0, cast back for its consumers). Casts are `ascend.format_cast` ops on the tensor's
#ascend.format encoding; the logical shape never changes. Then:
  - inverse pairs cancel (conv -> NCHW -> conv keeps NC1HWC0 in between) and chains collapse;
  - a cast of a constant folds into the constant (weights are laid out at compile time).
Formats do not apply where no fractal exists (f64, i64, ...), to dynamic shapes, or to operands
that already carry a format; those operands stay as they are. Matmul results stay ND: fixpipe
writes them out row-major, which is what elementwise epilogues read.
"""

from torch_mlir import ir, rewrite

from ..dialects.ascend import FormatCastOp, load_ascend, tensor_format, with_format

CUBE_BIT_WIDTHS = (8, 16, 32)


def _castable(v: ir.Value) -> bool:
    t = v.type
    if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape or tensor_format(t) != "ND":
        return False
    elt = t.element_type
    return isinstance(elt, (ir.FloatType, ir.IntegerType)) and elt.width in CUBE_BIT_WIDTHS and not isinstance(
        elt, ir.F64Type)


def _cast_operand(op: ir.OpView, index: int, fmt: str) -> None:
    v = op.operands[index]
    if not _castable(v):
        return
    with ir.InsertionPoint(op), op.location:
        cast = FormatCastOp(v, with_format(v.type, fmt))
    op.operands[index] = cast.result


def _assign_matmul(op: ir.OpView) -> None:
    for i in (0, 1):
        _cast_operand(op, i, "FRACTAL_NZ")


def _assign_conv(op: ir.OpView) -> None:
    result = op.results[0]
    if not _castable(op.operands[0]) or not _castable(op.operands[1]) or not _castable(result):
        return
    _cast_operand(op, 0, "NC1HWC0")
    _cast_operand(op, 1, "FRACTAL_Z")
    nd_type = result.type
    result.set_type(with_format(nd_type, "NC1HWC0"))
    with ir.InsertionPoint.after(op), op.location:
        back = FormatCastOp(result, nd_type)
    result.replace_all_uses_except(back.result, back.operation)


def cancel_or_fold(op: ir.OpView, rewriter: rewrite.PatternRewriter) -> bool:
    """format_cast(format_cast(x)) -> x or one cast; format_cast(constant) -> constant."""
    src = op.operands[0]
    producer = src.owner
    if not isinstance(producer, ir.OpView):
        return True
    if producer.operation.name == "ascend.format_cast":
        inner = producer.operands[0]
        if inner.type == op.results[0].type:
            rewriter.replace_op(op, [inner])
            return False
        with rewriter.ip, op.location:
            merged = FormatCastOp(inner, op.results[0].type)
        rewriter.replace_op(op, [merged.result])
        return False
    if producer.operation.name == "arith.constant":
        value = producer.attributes["value"]
        if not isinstance(value, ir.DenseElementsAttr):
            return True  # dense_resource blobs stay: folding would copy the weights
        new_type = op.results[0].type
        folded = (ir.DenseElementsAttr.get_splat(new_type, value.get_splat_value()) if value.is_splat
                  else ir.DenseElementsAttr.get(memoryview(value), type=new_type))
        with rewriter.ip, op.location:
            const = ir.Operation.create("arith.constant", results=[new_type], attributes={"value": folded})
        rewriter.replace_op(op, [const.result])
        return False
    return True


def run(module: ir.Operation, *, cube_nz: bool = True, conv_formats: bool = True) -> bool:
    load_ascend(module.context)
    cube_ops: list[ir.OpView] = []

    def collect(op: ir.Operation) -> ir.WalkResult:
        if op.name in ("ascend.matmul", "ascend.batch_matmul") and cube_nz:
            cube_ops.append(op.opview)
        elif op.name == "ascend.conv2d" and conv_formats:
            cube_ops.append(op.opview)
        return ir.WalkResult.ADVANCE

    module.walk(collect)
    for op in cube_ops:
        (_assign_conv if op.operation.name == "ascend.conv2d" else _assign_matmul)(op)
    patterns = rewrite.RewritePatternSet(module.context)
    patterns.add(FormatCastOp, cancel_or_fold)
    rewrite.apply_patterns_and_fold_greedily(module, patterns.freeze())
    return True
