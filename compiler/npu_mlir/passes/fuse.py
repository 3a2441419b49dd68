"""ascend-fuse: group ascend tensor ops into kernels and outline each group as `ascend.kernel`.

Groups, built greedily in program order (an op joins the group of one of its producers when
the shapes fit, or starts its own):
  elementwise      elementwise ops and broadcasts over one domain
  reduction        reductions with their producers and consumers, all reducing the same dims
                   of the same domain (softmax and layer norm become one kernel: one row per
                   tile)
  matmul_epilogue  a matmul / batch_matmul with the elementwise ops that consume its result
  conv             a conv2d with its elementwise epilogue
  single           an op that fuses with nothing (format_cast, transpose); reshapes stay on the
                   host as views. An ND -> FRACTAL_NZ cast of a matmul operand is no kernel of
                   its own: it joins the matmul's kernel, whose copy-in converts the operand
                   GM -> L1 (one cast per matmul that reads it)
  opaque           upstream ops raising left as they are (gathers, value+index reductions,
                   tensor.concat, ...) with the other such ops they feed; the kernel body keeps
                   them, tiled as one block with no AscendC yet, so the host still computes nothing
An op may join a group only if none of its operands depends on that group through an op
outside it, so outlining can never create a cycle; two groups of the same shape that do not
depend on each other merge when an op reads both (layer norm's mean and variance branches). Fusion is what saves the GM round trips
between ops: one kernel reads its inputs once and writes its results once.
A group of ascend ops whose outputs differ in type is split: its trailing ops move to a follow-up
kernel (which reads the head's results) until the outputs agree, the form the tiling and the
vector emitters take. An opaque group is not split (one linalg.generic may yield f32 values
and i64 indices): its kernel yields results of several types, up to the RESULT_TYPE_RUNS a yield
stores; a group with more result types is outlined once per that many (each copy recomputes it).
The outlined body holds tensor-level ops only (scalar constants are cloned in, other scalars
and tensors become kernel arguments), so each kernel compiles on its own.
"""

from torch_mlir import ir

from ..dialects.ascend import load_ascend
from ..dialects.ascend.kernel_ops import RESULT_TYPE_RUNS
from ..analysis.host_function import VIEW_OPS
from ..analysis.kernel_model import is_copy_in_cast
from .fuse_groups import ALONE, CUBE, Group, tensor_shape, group_block
from .fuse_outline import members_of, outline


def _kind_of(ops: list[ir.OpView]) -> str:
    names = [op.operation.name for op in ops]
    cube = [CUBE[n] for n in names if n in CUBE]
    if cube:
        return cube[0]
    if "ascend.reduce" in names:
        return "reduction"
    return "single" if any(n in ALONE for n in names) else "elementwise"


def _outline_split(group: Group, func: ir.OpView, fname: str, names: set[str]) -> None:
    """Outline `group`; while it refuses outputs of several types, move its last op to a follow-up group.

    Ops are in program order, so the head stays closed under its own dependencies and the
    tail (outlined after it) may read the head's results.
    """
    if group.kind == "opaque":
        members = members_of(group)
        types = list(dict.fromkeys(r.type for op in group.ops for r in op.results
                                   if any(u.owner not in members for u in r.uses)))
        chunks = [set(types[i:i + RESULT_TYPE_RUNS]) for i in range(0, len(types), RESULT_TYPE_RUNS)] or [None]
        for i, chunk in enumerate(chunks):  # one kernel unless a yield cannot store every result type
            outline(group, func, fname, names, only_types=chunk, keep=i < len(chunks) - 1)
        return
    tail: list[ir.OpView] = []
    while not outline(group, func, fname, names):
        tail.insert(0, group.ops.pop())
        group.kind = _kind_of(group.ops)
    if tail:
        _outline_split(Group(_kind_of(tail), tensor_shape(tail[-1].results[0]), tail), func, fname, names)


def _splat(v: ir.Value) -> ir.Attribute | None:
    """The element of a splat constant tensor `v` (torch-mlir folds a returned full / zeros to one)."""
    owner = v.owner
    if not (isinstance(owner, ir.OpView) and owner.operation.name == "arith.constant"):
        return None
    value = owner.operation.attributes["value"]
    if not isinstance(value, ir.DenseElementsAttr) or not value.is_splat or 0 in ir.RankedTensorType(v.type).shape:
        return None
    return value.get_splat_value()


def _constant(v: ir.Value) -> bool:
    owner = v.owner
    return isinstance(owner, ir.OpView) and owner.operation.name == "arith.constant" \
        and isinstance(v.type, ir.RankedTensorType) and 0 not in ir.RankedTensorType(v.type).shape


def _written_copy(v: ir.Value, root: ir.Value, ip: ir.InsertionPoint, loc: ir.Location) -> ir.Value:
    """A new tensor holding `v`'s elements, written by an op ascend-fuse outlines as an opaque
    kernel: a fill when `v` views a splat constant `root`, else a copy."""
    from torch_mlir.dialects import arith, linalg, tensor

    with ip, loc:
        t = ir.RankedTensorType(v.type)
        empty = tensor.EmptyOp(list(t.shape), t.element_type)
        splat = _splat(root)
        if splat is not None:
            return linalg.fill(arith.ConstantOp(t.element_type, splat).result, outs=[empty.result])
        return linalg.copy(v, outs=[empty.result])


def _root(v: ir.Value) -> ir.Value:
    while isinstance(v.owner, ir.OpView) and v.owner.operation.name in VIEW_OPS:
        v = v.owner.operands[0]
    return v


def _copy_aliased_results(func: ir.OpView) -> None:
    """A result that is an argument (or a view of one), or that repeats another result, gets a
    copy of its own: a launch list writes each result into its own buffer (aten.alias, an
    identity decomposition). A result that is a splat constant gets a fill, any other constant a
    copy (of the constant, cloned into the kernel). The copy or fill is an opaque kernel like any
    upstream op (no kernel would write a host constant into the result)."""
    block = func.regions[0].blocks[0]
    ret = list(block.operations)[-1]
    seen: set[ir.Value] = set()
    for i, v in enumerate(list(ret.operands)):
        root = _root(v)
        if isinstance(root, ir.BlockArgument) or root in seen or _constant(root):
            ret.operands[i] = _written_copy(v, root, ir.InsertionPoint(ret), ret.location)
        seen.add(root)


def _copy_constant_operands(func: ir.OpView) -> None:
    """A tensor constant (or a view of one) that an ascend op reads is written into a buffer by
    a fill / copy kernel first: an opaque kernel clones the constants it reads into its body, but
    an ascend kernel takes tensors as arguments, and a launch list has no buffer holding a host
    constant (a table of coefficients torch-mlir folded would else stay in the host function)."""
    block = func.regions[0].blocks[0]
    for op in list(block.operations):
        op = op.operation
        if not op.name.startswith("ascend."):
            continue
        for i, v in enumerate(list(op.operands)):
            root = _root(v)
            if _constant(root):
                op.operands[i] = _written_copy(v, root, ir.InsertionPoint(op), op.location)


def _cast_per_cube_use(block: ir.Block) -> None:
    """A copy-in cast read by several cube ops (a weight cse shared) is cloned for each, so every
    cube kernel converts its own operand in its copy-in."""
    for op in list(block.operations):
        if not is_copy_in_cast(op.operation):
            continue
        for use in list(op.results[0].uses)[1:]:
            clone = op.operation.clone(ir.InsertionPoint(op))
            use.owner.operands[use.operand_number] = clone.results[0]


def _fold_checks(groups: list[Group]) -> list[Group]:
    """An opaque group with no results (index-bounds checks: a linalg.generic of cf.asserts, see
    split_index_checks.py) joins the next opaque group in program order, whose launch comes after
    every value the checks read: one launch fewer. Checks with no opaque group after them stay a
    kernel of their own, which returns nothing."""
    opaque = [g for g in groups if g.kind == "opaque"]
    pending: list[Group] = []
    for g in opaque:
        if not any(r for op in g.ops for r in op.results):
            pending.append(g)
            continue
        for p in pending:
            g.ops[:0] = p.ops
            groups.remove(p)
        pending = []
    return groups


def run(module: ir.Operation, *, max_ops: int = 64, epilogue: bool = True) -> bool:
    load_ascend(module.context)
    if max_ops < 1:
        module.location.emit_error("ascend-fuse: max-ops must be at least 1")
        return False
    names: set[str] = set()
    for func in list(module.regions[0].blocks[0].operations):
        if func.operation.name != "func.func" or not func.regions[0].blocks:
            continue
        fname = ir.StringAttr(func.attributes["sym_name"]).value
        _copy_aliased_results(func)
        _copy_constant_operands(func)
        _cast_per_cube_use(func.regions[0].blocks[0])
        for group in _fold_checks(group_block(func.regions[0].blocks[0], max_ops, epilogue)):
            _outline_split(group, func, fname, names)
    return True
