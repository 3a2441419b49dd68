"""Contraction generics for ascend-raise-linalg: a mul+add linalg.generic -> ascend.matmul / batch_matmul.

`linalg-fuse-elementwise-ops` folds the reshapes around a matmul into it (fusion by expansion): a
linear on a [B, S, D] input becomes a 4-d generic (d0, d1, d3) x (d3, d2) -> (d0, d1, d2), a
head-split attention product a 5-d one with two batch dims. Raised as a generic reduction, such a
contraction is a broadcast multiply of both operands over the whole iteration domain plus a sum
on the vector unit. Here its loop dims are sorted into groups - batch (read by A, B and the
result), M (A and the result), N (B and the result), K (reduced, A and B) - each group is
collapsed to one dim with tensor.collapse_shape / expand_shape (host views) and the product goes
to the cube. An operand whose dims come as [batch, K, M] (A) or [batch, N, K] (B) sets
transpose_a / transpose_b; one produced by a transpose is read through it when that gives such a
layout (torch's linear transposes its weight, attention's k^T is a permute); any other layout
costs one ascend.transpose. A product with M or N empty (a matrix-vector or dot product) is no
broadcast and stays a reduction.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from math import prod

from torch_mlir import ir, rewrite
from torch_mlir.dialects import tensor

from ..dialects.ascend import BatchMatmulOp, MatmulOp, TransposeOp
from .raise_linalg_body import BodyTranslator
from .raise_linalg_named import _acc_type, _plus_init

TRANSPOSES = ("linalg.transpose", "ascend.transpose")


@dataclass
class Operand:
    """A value and the loop dim each of its dims is read at."""
    value: ir.Value
    dims: list[int]


@dataclass
class Layout:
    """How one cube operand is read: the value, the permutation still needed (None: none), the
    dim groups after it (loop dims, in order) and whether the cube reads it transposed."""
    value: ir.Value
    perm: list[int] | None
    groups: list[list[int]]
    transposed: bool


def _dims(amap: ir.AffineMap) -> list[int] | None:
    exprs = list(amap.results)
    if not all(isinstance(e, ir.AffineDimExpr) for e in exprs):
        return None
    dims = [ir.AffineDimExpr(e).position for e in exprs]
    return dims if len(set(dims)) == len(dims) else None


def _mul_add(block: ir.Block) -> tuple[ir.Value, ir.Value] | None:
    """(u, v) when the body yields out + u * v in out's float type."""
    out = block.arguments[len(block.arguments) - 1]
    add = list(block.operations)[-1].operands[0].owner
    if not isinstance(add, ir.OpView) or add.operation.name != "arith.addf" or len(list(out.uses)) != 1:
        return None
    rest = [x for x in add.operands if x != out]
    mul = rest[0].owner if len(rest) == 1 else None
    if not isinstance(mul, ir.OpView) or mul.operation.name != "arith.mulf":
        return None
    u, v = mul.operands
    if not isinstance(out.type, ir.FloatType) or not u.type == v.type == out.type:
        return None
    return u, v


def _subtree(value: ir.Value, block: ir.Block) -> tuple[set[int], set[ir.Operation]] | None:
    """The inputs (block argument numbers) and body ops `value` is computed from; None if it reads
    the accumulator."""
    args = {a: i for i, a in enumerate(block.arguments)}
    body = {o.operation for o in block.operations}
    inputs, ops, stack = set(), set(), [value]
    while stack:
        v = stack.pop()
        if v in args:
            if args[v] == len(args) - 1:
                return None
            inputs.add(args[v])
        elif isinstance(v.owner, ir.OpView) and v.owner.operation in body and v.owner.operation not in ops:
            ops.add(v.owner.operation)
            stack.extend(v.owner.operands)
    return inputs, ops


def _read_dims(amap: ir.AffineMap) -> list[int] | None:
    """The loop dims a map reads; None unless each result is a dim or a unit dim's constant 0."""
    dims = []
    for e in amap.results:
        if isinstance(e, ir.AffineDimExpr):
            dims.append(ir.AffineDimExpr(e).position)
        elif not (isinstance(e, ir.AffineConstantExpr) and ir.AffineConstantExpr(e).value == 0):
            return None
    return dims


def _factor(op: ir.OpView, value: ir.Value, maps: list[ir.AffineMap], domain: list[int],
            tr: BodyTranslator) -> Operand | None:
    """One side of the product: an input as it is, or the elementwise prologue computing it from
    several (attention's exp(s - max) / sum feeding probs @ v) as a tensor over the loop dims its
    inputs read, computed once instead of once per column of the other side."""
    block = op.region.blocks[0]
    args = list(block.arguments)
    if value in args[:-1]:
        k = args.index(value)
        dims = _dims(maps[k])
        return None if dims is None else Operand(op.inputs[k], dims)
    found = _subtree(value, block)
    if found is None or not found[0]:
        return None
    inputs, ops = found
    read = [_read_dims(maps[k]) for k in sorted(inputs)]
    if None in read:
        return None
    from .raise_linalg import to_domain  # the input materialisation is shared with parallel generics

    dims = sorted({d for r in read for d in r})
    sub = BodyTranslator([domain[d] for d in dims], tr.loc, indexable=False)
    env = {}
    for k in sorted(inputs):
        exprs = [ir.AffineDimExpr.get(dims.index(ir.AffineDimExpr(e).position)) if isinstance(e, ir.AffineDimExpr)
                 else e for e in maps[k].results]
        env[args[k]] = to_domain(op.inputs[k], ir.AffineMap.get(len(dims), 0, exprs), sub.shape, sub)
    result = None
    if all(x is not None for x in env.values()) and sub.translate(block, env, only=ops) is not None:
        result = env.get(value)
    if result is None or not isinstance(result.type, ir.RankedTensorType):
        sub.undo()
        return None
    tr.created += sub.created
    return Operand(result, dims)


def _through_transpose(x: Operand) -> Operand | None:
    """The transpose's source read at the same loop dims (result dim i is source dim perm[i])."""
    t = x.value.owner
    if not isinstance(t, ir.OpView) or t.operation.name not in TRANSPOSES:
        return None
    perm = list(ir.DenseI64ArrayAttr(t.attributes["permutation"]))
    dims = [0] * len(perm)
    for i, p in enumerate(perm):
        dims[p] = x.dims[i]
    return Operand(t.operands[0], dims)


def _layout(x: Operand, lead: list[int], first: list[int], second: list[int]) -> Layout:
    """Read `x` as [lead, first, second] (or [lead, second, first], transposed), with a
    permutation when its dims come in neither order."""
    for groups, transposed in (([lead, first, second], False), ([lead, second, first], True)):
        if x.dims == [d for g in groups for d in g]:
            return Layout(x.value, None, [g for g in groups if g], transposed)
    want = [d for g in (lead, first, second) for d in g]
    return Layout(x.value, [x.dims.index(d) for d in want], [g for g in (lead, first, second) if g], False)


def reassociation(groups: list[list[int]]) -> ir.ArrayAttr:
    """The reshape reassociation merging consecutive dims, len(g) of them for each group g."""
    i64 = ir.IntegerType.get_signless(64)
    reassoc, start = [], 0
    for g in groups:
        reassoc.append(ir.ArrayAttr.get([ir.IntegerAttr.get(i64, start + j) for j in range(len(g))]))
        start += len(g)
    return ir.ArrayAttr.get(reassoc)


def _materialize(lay: Layout, domain: list[int]) -> ir.Value:
    """The operand as the cube reads it: permuted if it must be, each dim group collapsed to one dim."""
    v = lay.value
    elt = ir.RankedTensorType(v.type).element_type
    if lay.perm is not None:
        shape = [domain[d] for g in lay.groups for d in g]
        v = TransposeOp(v, ir.DenseI64ArrayAttr.get(lay.perm), ir.RankedTensorType.get(shape, elt)).result
    if all(len(g) == 1 for g in lay.groups):
        return v
    sizes = [prod(domain[d] for d in g) for g in lay.groups]
    return tensor.CollapseShapeOp(ir.RankedTensorType.get(sizes, elt), v, reassociation(lay.groups)).result


def _roles(a: list[int], b: list[int], c: list[int], reduced: set[int]) -> tuple[list[int], ...] | None:
    """(batch, M, N, K) loop dims, batch / M / N in the result's order, or None if not a matmul."""
    parallel = set(c)
    if parallel & reduced or not reduced <= (set(a) & set(b)) or not parallel <= (set(a) | set(b)):
        return None
    batch = [d for d in c if d in a and d in b]
    m = [d for d in c if d in a and d not in b]
    n = [d for d in c if d in b and d not in a]
    k = [d for d in a if d in reduced]
    return (batch, m, n, k) if m and n and k else None


def raise_contraction(op: ir.OpView, rewriter: rewrite.PatternRewriter, maps: list[ir.AffineMap],
                      domain: list[int]) -> bool:
    """Rewrite a contraction generic to the cube (False: done, the pattern convention), else True."""
    outputs = list(op.outputs)
    found = _mul_add(op.region.blocks[0]) if len(outputs) == 1 else None
    c = _dims(maps[-1])
    if found is None or c is None:
        return True
    reduced = {i for i, t in enumerate(op.iterator_types) if "reduction" in str(t)}
    u, v = found
    with rewriter.ip, op.location:
        tr = BodyTranslator(domain, op.location)
        a, b = _factor(op, u, maps, domain, tr), _factor(op, v, maps, domain, tr)
        roles = None if a is None or b is None else _roles(a.dims, b.dims, c, reduced)
        if roles is None:
            tr.undo()
            return True
    batch, m, n, k = roles
    # The cube writes [batch, M, N]: when the result holds N before M, compute it as B^T A^T.
    if c.index(n[0]) < c.index(m[0]):
        a, b, m, n = b, a, n, m
    best = None
    # Reading through a transpose comes first: at equal cost it leaves the transpose kernel unused.
    for xa, xb in product([_through_transpose(a), a], [_through_transpose(b), b]):
        if xa is None or xb is None:
            continue
        for korder in ([d for d in xa.dims if d in k], [d for d in xb.dims if d in k]):
            la, lb = _layout(xa, batch, m, korder), _layout(xb, batch, korder, n)
            cost = (la.perm is not None) + (lb.perm is not None)
            if best is None or cost < best[0]:
                best = (cost, la, lb)
    _, la, lb = best
    want = batch + m + n
    out_perm = None if c == want else [want.index(d) for d in c]
    result_type = ir.RankedTensorType(op.results[0].type)
    elt = result_type.element_type
    with rewriter.ip, op.location:
        va, vb = _materialize(la, domain), _materialize(lb, domain)
        sizes = [prod(domain[d] for d in g) for g in (batch, m, n) if g]
        cls = BatchMatmulOp if batch else MatmulOp
        mm = cls(va, vb, _acc_type(elt), ir.RankedTensorType.get(sizes, elt),
                 transpose_a=ir.BoolAttr.get(la.transposed), transpose_b=ir.BoolAttr.get(lb.transposed)).result
        groups = [g for g in (batch, m, n) if g]
        full = [domain[d] for d in want]
        if len(full) != len(groups):
            mm = tensor.ExpandShapeOp(ir.RankedTensorType.get(full, elt), mm, reassociation(groups), [], full).result
        if out_perm is not None:
            mm = TransposeOp(mm, ir.DenseI64ArrayAttr.get(out_perm), result_type).result
        result = _plus_init(mm, outputs[0])
    rewriter.replace_op(op, [result])
    return False


# After raising, a contraction's consumers read its result through the expand_shape above; the
# elementwise generic fused after it (a bias, gelu, a residual add) is raised in the 2-d matmul's
# shape, so that ascend-fuse can make it the matmul kernel's epilogue. (lower-tiles has no epilogue
# for a batch_matmul: its consumers keep their own shape and kernel.)
CUBE_RESULTS = ("ascend.matmul",)


def _reads_whole(amap: ir.AffineMap, groups: list[list[int]]) -> bool:
    """Every dim group of the map's operand is read whole, in order at consecutive dims, or not at all."""
    exprs = list(amap.results)
    if not all(isinstance(e, (ir.AffineDimExpr, ir.AffineConstantExpr)) for e in exprs):
        return False
    read = [ir.AffineDimExpr(e).position if isinstance(e, ir.AffineDimExpr) else None for e in exprs]
    for g in groups:
        if len(g) > 1 and any(d in read for d in g):
            at = [i for i, d in enumerate(read) if d in g]
            if [read[i] for i in at] != g or at != list(range(at[0], at[0] + len(g))):
                return False
    return True


def epilogue_groups(op: ir.OpView, maps: list[ir.AffineMap], rank: int) -> list[list[int]] | None:
    """Consecutive loop-dim groups covering an all-parallel generic's domain, merging the dims one
    of its inputs has from expanding a cube result, when every operand reads each group whole."""
    for v, amap in zip(op.inputs, maps):
        expand = v.owner
        if not isinstance(expand, ir.OpView) or expand.operation.name != "tensor.expand_shape":
            continue
        cube = expand.operands[0].owner
        dims = _dims(amap)
        if not isinstance(cube, ir.OpView) or cube.operation.name not in CUBE_RESULTS or dims is None:
            continue
        merged = []
        for g in ir.ArrayAttr(expand.attributes["reassociation"]):
            loops = [dims[ir.IntegerAttr(p).value] for p in ir.ArrayAttr(g)]
            if loops != list(range(loops[0], loops[0] + len(loops))):
                break
            merged.append(loops)
        else:
            covered = {d for g in merged for d in g}
            groups = sorted(merged + [[d] for d in range(rank) if d not in covered])
            if any(len(g) > 1 for g in groups) and all(_reads_whole(m, groups) for m in maps):
                return groups
    return None


def collapse_operand(value: ir.Value, amap: ir.AffineMap, groups: list[list[int]]) -> tuple[ir.Value, ir.AffineMap, list]:
    """`value` with each loop-dim group it reads collapsed into one dim, its map over the groups,
    and the ops built."""
    index = {g[0]: i for i, g in enumerate(groups)}
    length = {g[0]: len(g) for g in groups}
    exprs, parts, pos = [], [], 0
    results = list(amap.results)
    while pos < len(results):
        e = results[pos]
        if isinstance(e, ir.AffineDimExpr):
            d = ir.AffineDimExpr(e).position
            exprs.append(ir.AffineDimExpr.get(index[d]))
            parts.append(list(range(pos, pos + length[d])))
            pos += length[d]
        else:
            exprs.append(e)
            parts.append([pos])
            pos += 1
    new_map = ir.AffineMap.get(len(groups), 0, exprs)
    if len(parts) == len(results):
        return value, new_map, []
    tt = ir.RankedTensorType(value.type)
    sizes = [prod(tt.shape[p] for p in part) for part in parts]
    op = tensor.CollapseShapeOp(ir.RankedTensorType.get(sizes, tt.element_type), value, reassociation(parts))
    return op.result, new_map, [op]
