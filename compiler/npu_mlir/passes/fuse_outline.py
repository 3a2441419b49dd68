"""Outlining for ascend-fuse: one group of ops -> an `ascend.kernel` plus an `ascend.launch`.

The launch takes the place of the group's last op. Ops outside the group that sit between its
ops and consume its results move after the launch (the grouping guarantees none of them feeds
the group). Scalar ops computed from constants and 0-d tensors (`tensor.extract` of an eager
scalar parameter, then its casts) are cloned into the kernel, so its body folds and the host
function computes nothing; the 0-d tensor becomes the kernel argument (a by-value parameter of
the launch). Every other value from outside becomes a kernel argument.

An `opaque` group (upstream ops raising left alone) also clones in the constants and
`tensor.empty`s it reads, and the values its ops' regions capture from the host (a gather's
`tensor.extract` of the source tensor) become kernel arguments too, so the kernel stays isolated
from above.
"""

from torch_mlir import ir

from ..dialects.ascend import KernelOp, LaunchOp, YieldOp
from ..analysis.host_function import VIEW_OPS
from .fuse_groups import FREE_OPS


def _is_scalar_read(op: ir.Operation) -> bool:
    return op.name == "tensor.extract" and ir.RankedTensorType(op.operands[0].type).rank == 0


def _scalar_chain(v: ir.Value) -> list[ir.Operation] | None:
    """The scalar ops computing `v` from constants and 0-d tensor reads (defs first), or None."""
    owner = v.owner
    if not isinstance(owner, ir.OpView) or isinstance(v.type, ir.ShapedType):
        return None
    if _is_scalar_read(owner.operation):
        return [owner.operation]
    if not owner.operation.name.startswith(("arith.", "math.")) or len(owner.results) != 1:
        return None
    chain: list[ir.Operation] = []
    for operand in owner.operands:
        sub = _scalar_chain(operand)
        if sub is None:
            return None
        chain += [o for o in sub if o not in chain]
    return chain + [owner.operation]


def _nested_ops(op: ir.Operation):
    """The ops inside `op`'s regions, outer before inner."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield inner.operation
                yield from _nested_ops(inner.operation)


def _captured(op: ir.Operation) -> list[ir.Value]:
    """Values used inside `op`'s regions that are defined outside `op`."""
    defined: set[ir.Value] = set()
    for region in op.regions:
        for block in region.blocks:
            defined.update(block.arguments)
    out: list[ir.Value] = []
    for inner in _nested_ops(op):
        for region in inner.regions:
            for block in region.blocks:
                defined.update(block.arguments)
        defined.update(inner.results)
    for inner in _nested_ops(op):
        out += [v for v in inner.operands if v not in defined and v not in out]
    return out


def members_of(group) -> set[ir.Operation]:
    """The group's ops and every op nested in their regions: a use by any of them is inside the
    group (a gather's region reads the tensor another member of its opaque group computes)."""
    out: set[ir.Operation] = set()
    for op in group.ops:
        out.add(op.operation)
        out.update(_nested_ops(op.operation))
    return out


def _free_def(v: ir.Value) -> list[ir.Operation] | None:
    """A constant or tensor.empty, or a reshape of one (defs first): cloned, never an argument."""
    owner = v.owner
    if not isinstance(owner, ir.OpView):
        return None
    if owner.operation.name in FREE_OPS:
        return [owner.operation]
    if owner.operation.name in VIEW_OPS:
        inner = _free_def(owner.operands[0])
        return None if inner is None else inner + [owner.operation]
    return None


def _core_type(group) -> str:
    if group.kind in ("matmul_epilogue", "conv"):
        return "mix" if len(group.ops) > 1 else "aic"
    return "aiv"


def outline(group, func: ir.OpView, fname: str, names: set[str], only_types: set | None = None,
            keep: bool = False) -> bool:
    """Outline `group`; False (and nothing changed) when it is not opaque and its outputs differ
    in type: ascend-fuse then splits it (an opaque kernel yields what its upstream ops compute, a
    value + index reduction both of its results).
    `only_types`: outline a copy of the group that yields its outputs of these types only, and with
    `keep`, leave the group in place for the next copy (an opaque group with more result types
    than a yield stores, RESULT_TYPE_RUNS, is outlined once per that many types)."""
    members = members_of(group)
    opaque = group.kind == "opaque"
    inputs: list[ir.Value] = []
    constants: list[ir.Operation] = []  # scalar ops from constants and 0-d reads, cloned in
    for op in group.ops:
        operands = list(op.operands) + (_captured(op.operation) if opaque else [])
        for v in operands:
            owner = v.owner
            if isinstance(owner, ir.OpView) and owner.operation in members:
                continue
            chain = _scalar_chain(v) or (_free_def(v) if opaque else None)
            if chain is None:
                if v not in inputs:
                    inputs.append(v)
                continue
            constants += [c for c in chain if c not in constants]
            inputs += [c.operands[0] for c in chain if _is_scalar_read(c) and c.operands[0] not in inputs]
    outputs = [r for op in group.ops for r in op.results
               if any(u.owner not in members for u in r.uses)]
    if only_types is not None:
        outputs = [v for v in outputs if v.type in only_types]
    if not opaque and len({v.type for v in outputs}) > 1:
        return False
    # Outputs of one type side by side: a yield stores each run of equal types as one group.
    order = list(dict.fromkeys(str(v.type) for v in outputs))
    outputs.sort(key=lambda v: order.index(str(v.type)))

    name = f"{fname}_{group.kind}_{len(names)}"
    names.add(name)
    ftype = ir.FunctionType.get([v.type for v in inputs], [v.type for v in outputs])
    with ir.InsertionPoint(func), group.ops[0].location:
        kernel = KernelOp(ir.StringAttr.get(name), ir.TypeAttr.get(ftype), ir.StringAttr.get(_core_type(group)),
                          ir.StringAttr.get(group.kind))
    block = kernel.body.blocks.append(*[v.type for v in inputs])
    mapping = dict(zip(inputs, block.arguments))
    with ir.InsertionPoint(block):
        for c in constants:
            clone = c.clone()
            for i, v in enumerate(c.operands):
                clone.operands[i] = mapping[v]
            mapping[c.results[0]] = clone.results[0]
        for op in group.ops:
            clone = op.operation.clone()
            for i, v in enumerate(op.operands):
                clone.operands[i] = mapping[v]
            if opaque:  # region bodies still name the host's values they capture
                for inner in _nested_ops(clone):
                    for i, v in enumerate(inner.operands):
                        if v in mapping:
                            inner.operands[i] = mapping[v]
            for old, new in zip(op.results, clone.results):
                mapping[old] = new
        YieldOp([mapping[v] for v in outputs], loc=group.ops[-1].location)

    last = group.ops[-1]
    with ir.InsertionPoint(last), last.location:
        launch = LaunchOp(ir.FlatSymbolRefAttr.get(name), inputs, [v.type for v in outputs])
    launch.operation.move_after(last.operation)
    _move_late_users(group, members, launch)
    if keep:
        # The group stays for the next copy: its own ops keep reading the values it computes.
        for old, new in zip(outputs, launch.results):
            for use in list(old.uses):
                if use.owner not in members:
                    use.owner.operands[use.operand_number] = new
        return True
    for old, new in zip(outputs, launch.results):
        old.replace_all_uses_with(new)
    for op in reversed(group.ops):
        op.operation.erase()
    # The host's copies of the cloned scalar chain are dead once their last reader moved in.
    for c in reversed(constants):
        if not any(len(list(r.uses)) for r in c.results):
            c.erase()
    return True


def _move_late_users(group, members: set, launch: ir.OpView) -> None:
    """Move outside ops between the group's first op and the launch that use its results."""
    tainted = {r for op in group.ops for r in op.results}
    anchor = launch.operation
    between = []
    cur = group.ops[0].operation
    block_ops = list(cur.block.operations)
    start = next(i for i, o in enumerate(block_ops) if o.operation == cur)
    for o in block_ops[start + 1:]:
        if o.operation == launch.operation:
            break
        between.append(o)
    for o in between:
        if o.operation in members:
            continue
        if any(v in tainted for v in o.operands):
            o.operation.move_after(anchor)
            anchor = o.operation
            tainted.update(o.results)
