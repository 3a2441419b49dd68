"""ascend-raise-linalg: linalg on tensors (torch-mlir output) -> ascend tensor ops.

Rewrites linalg.matmul / batch_matmul / conv_2d_nchw_fchw / transpose / broadcast and the
linalg.generic ops `linalg-fuse-elementwise-ops` leaves: contractions (the matmuls it folded
reshapes into) become cube ops on collapsed dim groups (raise_linalg_contraction.py), all-parallel
ones one ascend op per body op (raise_linalg_body.py), other single-result reductions the
elementwise prologue plus `ascend.reduce`. Input indexing maps that broadcast, permute or read unit dims become explicit
`tensor.collapse_shape` / `ascend.transpose` / `ascend.broadcast`. 0-d operands are read as scalars
(`tensor.extract`), which ascend-fuse moves into the kernel with the scalar ops that use them.
Anything else (gathers,
linalg.index, scans, multi-result reductions) is left untouched for the sim target to run as
plain linalg. Raising is what lets ascend-assign-formats and ascend-fuse see cube ops and
elementwise chains as such.
"""

from math import prod

from torch_mlir import ir, rewrite
from torch_mlir.dialects import tensor

from ..dialects.ascend import BroadcastOp, TransposeOp, load_ascend
from .raise_linalg_body import BodyTranslator
from .raise_linalg_contraction import collapse_operand, epilogue_groups, raise_contraction, reassociation
from .raise_linalg_named import raise_batch_matmul, raise_conv, raise_matmul, raise_named_broadcast, raise_named_transpose
from .raise_linalg_reduction import raise_reduction


def loop_ranges(maps: list[ir.AffineMap], values: list[ir.Value]) -> list[int] | None:
    """The static size of every loop dimension, read off the operands through their maps."""
    ranges: list[int | None] = [None] * maps[0].n_dims
    for m, v in zip(maps, values):
        for expr, size in zip(m.results, v.type.shape):
            if isinstance(expr, ir.AffineDimExpr):
                ranges[expr.position] = size
    return None if None in ranges else ranges


def to_domain(value: ir.Value, amap: ir.AffineMap, domain: list[int], tr: BodyTranslator) -> ir.Value | None:
    """Materialise `value` read through `amap` as a tensor over the whole iteration domain."""
    exprs = list(amap.results)
    if not exprs and domain:
        # A 0-d operand (an eager scalar parameter, a fill value) is read once as a scalar: the
        # ascend ops take scalar operands, so it never becomes a broadcast tensor of its dtype
        # (an f64 parameter would otherwise be an f64 tensor in the kernel).
        op = tensor.ExtractOp(value, [])
        tr.created.append(op)
        return op.result
    dims = []
    for i, e in enumerate(exprs):
        if isinstance(e, ir.AffineDimExpr):
            dims.append(e.position)
        elif not (isinstance(e, ir.AffineConstantExpr) and e.value == 0 and value.type.shape[i] == 1):
            return None
    elt = value.type.element_type
    if len(exprs) == len(domain) and all(d == i for i, d in zip(range(len(domain)), _positions(exprs))):
        # Unit dims read at constant 0, everything else in place: one stretching broadcast.
        stretch = [i for i, e in enumerate(exprs) if isinstance(e, ir.AffineConstantExpr)]
        if not stretch:
            return value
        return tr._emit(BroadcastOp(value, ir.DenseI64ArrayAttr.get(stretch), ir.RankedTensorType.get(domain, elt)))
    if len(dims) != len(exprs):  # drop the unit dims read at constant 0
        value = _drop_unit_dims(value, [isinstance(e, ir.AffineDimExpr) for e in exprs], tr)
        if not dims:  # a one-element operand (addmm's bias of shape [1]) is a scalar, as a 0-d one
            return to_domain(value, ir.AffineMap.get(len(domain), 0, []), domain, tr)
    if dims != sorted(dims):
        perm = sorted(range(len(dims)), key=lambda i: dims[i])
        shape = [value.type.shape[p] for p in perm]
        value = tr._emit(TransposeOp(value, ir.DenseI64ArrayAttr.get(perm), ir.RankedTensorType.get(shape, elt)))
        dims = sorted(dims)
    if len(dims) < len(domain):
        added = [d for d in range(len(domain)) if d not in dims]
        value = tr._emit(BroadcastOp(value, ir.DenseI64ArrayAttr.get(added), ir.RankedTensorType.get(domain, elt)))
    return value


def _positions(exprs: list) -> list[int]:
    """Each result's loop position, constants counted as being in place."""
    return [e.position if isinstance(e, ir.AffineDimExpr) else i for i, e in enumerate(exprs)]


def _drop_unit_dims(value: ir.Value, keep: list[bool], tr: BodyTranslator) -> ir.Value:
    groups: list[list[int]] = []
    pending: list[int] = []
    for i, k in enumerate(keep):
        pending.append(i)
        if k:
            groups.append(pending)
            pending = []
    if pending and groups:
        groups[-1].extend(pending)
    i64 = ir.IntegerType.get_signless(64)
    reassoc = ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, i) for i in g]) for g in groups])
    shape = [s for s, k in zip(value.type.shape, keep) if k]
    op = tensor.CollapseShapeOp(ir.RankedTensorType.get(shape, value.type.element_type), value, reassoc)
    tr.created.append(op)
    return op.result


def _maps_and_domain(op: ir.OpView) -> tuple[list[ir.AffineMap], list[int]] | None:
    maps = [ir.AffineMapAttr(a).value for a in op.indexing_maps]
    values = list(op.inputs) + list(op.outputs)
    domain = loop_ranges(maps, values)
    if domain is None or not all(isinstance(v.type, ir.RankedTensorType) for v in values):
        return None
    return maps, domain


def raise_generic_contraction(op: ir.OpView, rewriter: rewrite.PatternRewriter) -> bool:
    found = _maps_and_domain(op)
    if found is None or not any("reduction" in str(t) for t in op.iterator_types):
        return True
    return raise_contraction(op, rewriter, *found)


def raise_generic(op: ir.OpView, rewriter: rewrite.PatternRewriter) -> bool:
    found = _maps_and_domain(op)
    if found is None:
        return True
    maps, domain = found
    if any("reduction" in str(t) for t in op.iterator_types):
        return raise_reduction(op, rewriter, maps, domain)
    block = op.region.blocks[0]
    inputs = list(op.inputs)
    n_in = len(inputs)
    if any(m != ir.AffineMap.get_identity(len(domain)) for m in maps[n_in:]):
        return True
    if any(len(list(a.uses)) for a in list(block.arguments)[n_in:]):
        return True
    # An epilogue runs in the shape of the cube result it reads (raise_linalg_contraction.py).
    groups = epilogue_groups(op, maps, len(domain))
    shape = domain if groups is None else [prod(domain[d] for d in g) for g in groups]
    with rewriter.ip, op.location:
        tr = BodyTranslator(shape, op.location, indexable=groups is None)
        if groups is not None:
            for k, (value, amap) in enumerate(zip(inputs, maps)):
                inputs[k], maps[k], built = collapse_operand(value, amap, groups)
                tr.created += built
        env = {}
        for arg, value, amap in zip(block.arguments, inputs, maps):
            env[arg] = to_domain(value, amap, tr.shape, tr)
            if env[arg] is None:
                tr.undo()
                return True
        results = tr.translate(block, env)
        if results is None or not all(isinstance(r.type, ir.RankedTensorType) for r in results):
            tr.undo()
            return True
        if groups is not None:
            results = [tensor.ExpandShapeOp(ir.RankedTensorType.get(domain, ir.RankedTensorType(r.type).element_type), r,
                                            reassociation(groups), [], domain).result for r in results]
    rewriter.replace_op(op, results)
    return False


def run(module: ir.Operation) -> bool:
    load_ascend(module.context)
    # Contractions first: the elementwise generics after them see the cube result they read.
    cube = rewrite.RewritePatternSet(module.context)
    cube.add("linalg.generic", raise_generic_contraction)
    rewrite.apply_patterns_and_fold_greedily(module, cube.freeze())
    patterns = rewrite.RewritePatternSet(module.context)
    patterns.add("linalg.generic", raise_generic)
    patterns.add("linalg.matmul", raise_matmul)
    patterns.add("linalg.batch_matmul", raise_batch_matmul)
    patterns.add("linalg.conv_2d_nchw_fchw", raise_conv)
    patterns.add("linalg.transpose", raise_named_transpose)
    patterns.add("linalg.broadcast", raise_named_broadcast)
    rewrite.apply_patterns_and_fold_greedily(module, patterns.freeze())
    return True
