"""Reductions for ascend-raise-linalg: a reduction linalg.generic -> prologue + ascend.reduce.

The body must end in one combiner (add/mul/max/min of the accumulator and a value computed from
the inputs); what computes that value is the elementwise prologue (softmax's exp(x - max) fused
into the sum), translated like a parallel body over the full iteration domain. An init that is
not a fill with the combiner's neutral element is added back with one binary op.
"""

import math

from torch_mlir import ir, rewrite

from ..dialects.ascend import BinaryOp, ReduceOp
from .raise_linalg_body import BodyTranslator

COMBINERS = {
    "arith.addf": "sum", "arith.addi": "sum", "arith.mulf": "prod", "arith.muli": "prod",
    "arith.maximumf": "max", "arith.maxnumf": "max", "arith.maxsi": "max",
    "arith.minimumf": "min", "arith.minnumf": "min", "arith.minsi": "min",
}
REDUCE_TO_BINARY = {"sum": "add", "prod": "mul", "max": "max", "min": "min"}


def _keepdim(out_map: ir.AffineMap, reduced: list[bool]) -> bool | None:
    """False when the output drops the reduced dims, True when it keeps them as size 1."""
    exprs = list(out_map.results)
    kept = [i for i, r in enumerate(reduced) if not r]
    if all(isinstance(e, ir.AffineDimExpr) for e in exprs) and [e.position for e in exprs] == kept:
        return False
    if len(exprs) == len(reduced) and all(
        (isinstance(e, ir.AffineConstantExpr) and e.value == 0) if r
        else (isinstance(e, ir.AffineDimExpr) and e.position == i)
        for i, (e, r) in enumerate(zip(exprs, reduced))
    ):
        return True
    return None


def _is_neutral_fill(init: ir.Value, kind: str) -> bool:
    fill = init.owner
    if not isinstance(fill, ir.OpView) or fill.operation.name != "linalg.fill":
        return False
    const = fill.operands[0].owner
    if not isinstance(const, ir.OpView) or const.operation.name != "arith.constant":
        return False
    attr = const.attributes["value"]
    if isinstance(attr, ir.FloatAttr):
        value, lowest, highest = attr.value, -math.inf, math.inf
    elif isinstance(attr, ir.IntegerAttr):
        width = attr.type.width
        value, lowest, highest = attr.value, -(1 << (width - 1)), (1 << (width - 1)) - 1
    else:
        return False
    return value == {"sum": 0, "prod": 1, "max": lowest, "min": highest}[kind]


def _through_unit_expand(x: ir.Value, dims: list[int], keepdim: bool,
                         result_type: ir.RankedTensorType) -> tuple[ir.Value, list[int], bool]:
    """Reduce the source of a unit-dim-inserting tensor.expand_shape directly when that gives
    the same result: torch-mlir expands [R, C] to [R, 1, C] to reduce into [R, 1], which is
    simply a keepdim reduction of [R, C], and keeps the reduction free of reshapes."""
    expand = x.owner
    if not isinstance(expand, ir.OpView) or expand.operation.name != "tensor.expand_shape":
        return x, dims, keepdim
    src, shape = list(expand.operands[0].type.shape), list(x.type.shape)
    inserted = [i for i, s in enumerate(shape) if s == 1]
    kept_dims = [i for i in range(len(shape)) if i not in inserted[: len(shape) - len(src)]]
    if len(kept_dims) != len(src) or [shape[i] for i in kept_dims] != src:
        return x, dims, keepdim
    if any(d not in kept_dims for d in dims):
        return x, dims, keepdim
    src_dims = [kept_dims.index(d) for d in dims]
    for keep in (True, False):
        want = [1 if i in src_dims else s for i, s in enumerate(src)] if keep else \
            [s for i, s in enumerate(src) if i not in src_dims]
        if want == list(result_type.shape):
            return expand.operands[0], src_dims, keep
    return x, dims, keepdim


def raise_reduction(op: ir.OpView, rewriter: rewrite.PatternRewriter, maps: list[ir.AffineMap],
                    domain: list[int]) -> bool:
    from .raise_linalg import to_domain  # the input materialisation is shared with parallel generics

    inputs, outputs = list(op.inputs), list(op.outputs)
    if len(outputs) != 1:
        return True
    reduced = ["reduction" in str(t) for t in op.iterator_types]
    keepdim = _keepdim(maps[-1], reduced)
    block = op.region.blocks[0]
    acc = block.arguments[len(inputs)]
    combiner = list(block.operations)[-1].operands[0].owner
    if keepdim is None or not isinstance(combiner, ir.OpView) or combiner.operation.name not in COMBINERS:
        return True
    others = [v for v in combiner.operands if v != acc]
    if len(others) != 1 or len(list(acc.uses)) != 1:
        return True
    kind = COMBINERS[combiner.operation.name]
    result_type = op.results[0].type
    with rewriter.ip, op.location:
        tr = BodyTranslator(domain, op.location)
        env = {}
        for arg, value, amap in zip(block.arguments, inputs, maps):
            env[arg] = to_domain(value, amap, domain, tr)
        if any(v is None for v in env.values()) or tr.translate(block, env, stop=combiner.operation) is None:
            tr.undo()
            return True
        x = env.get(others[0], others[0])
        if not isinstance(x.type, ir.RankedTensorType):
            tr.undo()
            return True
        dims = [i for i, r in enumerate(reduced) if r]
        x, dims, keepdim = _through_unit_expand(x, dims, keepdim, result_type)
        result = ReduceOp(x, ir.StringAttr.get(kind), ir.DenseI64ArrayAttr.get(dims), ir.BoolAttr.get(keepdim),
                          result_type).result
        if not _is_neutral_fill(outputs[0], kind):
            result = BinaryOp(result, outputs[0], ir.StringAttr.get(REDUCE_TO_BINARY[kind]), result_type).result
    rewriter.replace_op(op, [result])
    return False
