"""Grouping for ascend-fuse: which ascend ops of a block share a kernel (see fuse.py)."""

from dataclasses import dataclass, field

from torch_mlir import ir

from ..analysis.host_function import VIEW_OPS
from ..analysis.kernel_model import epilogue_layout, is_copy_in_cast, is_copy_out_cast

ELEMENTWISE = {"ascend.unary", "ascend.binary", "ascend.ternary", "ascend.cast", "ascend.compare",
               "ascend.select", "ascend.broadcast"}
# Kernels of their own: a transpose is a data movement the vector tiling does not model.
# Reshapes are not outlined at all: they are views, and stay in the host function.
ALONE = {"ascend.format_cast", "ascend.transpose"}
CUBE = {"ascend.matmul": "matmul_epilogue", "ascend.batch_matmul": "matmul_epilogue",
        "ascend.conv2d": "conv"}
# Ops that define a value without computing it: outlining clones them into the kernel that reads them.
FREE_OPS = {"arith.constant", "tensor.empty"}


def is_opaque(op: ir.OpView) -> bool:
    """An upstream op computing a tensor that raising left as it is (a gather's linalg.index
    body, a value+index reduction, tensor.concat, ...): it goes into an `opaque` kernel, whose
    body keeps the upstream ops for the sim target, so the host function still computes nothing."""
    name = op.operation.name
    if name.startswith("ascend.") or name in VIEW_OPS or name in FREE_OPS or name == "func.return":
        return False
    # No results: a generic that only checks (torch-mlir's index-bounds cf.asserts) is a kernel too.
    return not op.results or any(isinstance(r.type, ir.RankedTensorType) for r in op.results)


@dataclass
class Group:
    kind: str
    domain: list[int]
    ops: list[ir.OpView] = field(default_factory=list)
    reduce_dims: list[int] | None = None

    def shapes(self) -> list[list[int]]:
        """Result shapes an op may have to belong here."""
        if self.reduce_dims is None:
            return [self.domain]
        kept = [s for i, s in enumerate(self.domain) if i not in self.reduce_dims]
        ones = [1 if i in self.reduce_dims else s for i, s in enumerate(self.domain)]
        return [self.domain, kept, ones]


def tensor_shape(v: ir.Value) -> list[int] | None:
    return list(v.type.shape) if isinstance(v.type, ir.RankedTensorType) else None


def _try_join(group: Group, op: ir.OpView, max_ops: int) -> bool:
    name = op.operation.name
    if (group.kind == "opaque") != is_opaque(op):
        return False  # opaque ops only join opaque groups, and nothing else does
    if group.kind == "opaque":
        group.ops.append(op)
        return True
    if len(group.ops) >= max_ops or name in CUBE or name in ALONE or group.kind == "single":
        return False
    if name == "ascend.reduce":
        src, dims = tensor_shape(op.operands[0]), op.attr_ints("dims")
        if group.kind in ("matmul_epilogue", "conv") or src != group.domain:
            return False
        if group.reduce_dims not in (None, dims):
            return False
        group.kind, group.reduce_dims = "reduction", dims
    elif tensor_shape(op.results[0]) not in group.shapes():
        return False
    group.ops.append(op)
    return True


def _new_group(op: ir.OpView) -> Group | None:
    name = op.operation.name
    if name in CUBE:
        return Group(CUBE[name], tensor_shape(op.results[0]), [op])
    if name == "ascend.reduce":
        return Group("reduction", tensor_shape(op.operands[0]), [op], op.attr_ints("dims"))
    if name in ELEMENTWISE and tensor_shape(op.results[0]) is not None:
        return Group("elementwise", tensor_shape(op.results[0]), [op])
    if name in ALONE:
        return Group("single", tensor_shape(op.results[0]), [op])
    if is_opaque(op):
        return Group("opaque", tensor_shape(op.results[0]) if op.results else None, [op])
    return None


def group_block(block: ir.Block, max_ops: int, epilogue: bool) -> list[Group]:
    groups: list[Group] = []
    group_of: dict[ir.Operation, Group] = {}
    # reach[v]: ids of the groups value v depends on, directly or through any op.
    reach: dict[ir.Value, set[int]] = {}

    def producer_group(v: ir.Value) -> Group | None:
        owner = v.owner
        return group_of.get(owner.operation) if isinstance(owner, ir.OpView) else None

    # Broadcasts of values from outside every group (a bias, a norm weight) wait for their
    # first consumer and run inside its kernel instead of a kernel of their own.
    floating: dict[ir.Operation, ir.OpView] = {}
    # Likewise an ND -> NZ cast of a cube operand waits for its cube op: that kernel's copy-in
    # converts the operand (fuse.py gives each cube op its own cast).
    casts: dict[ir.Operation, ir.OpView] = {}

    position = {op.operation: i for i, op in enumerate(block.operations)}

    def needs(g: Group) -> set[int]:
        """Groups g reads from, directly or through other ops."""
        out: set[int] = set()
        for member in g.ops:
            for o in member.operands:
                if producer_group(o) is not g:
                    out |= reach.get(o, set())
        return out

    def merge(into: Group, other: Group) -> None:
        """Fold an independent group of the same shape into `into` (program order kept)."""
        into.ops = sorted(into.ops + other.ops, key=lambda o: position[o.operation])
        into.kind = "reduction" if "reduction" in (into.kind, other.kind) else into.kind
        into.reduce_dims = into.reduce_dims if into.reduce_dims is not None else other.reduce_dims
        for member in other.ops:
            group_of[member.operation] = into
        for deps in reach.values():
            if id(other) in deps:
                deps.discard(id(other))
                deps.add(id(into))
        groups.remove(other)

    def mergeable(g: Group, h: Group | None) -> bool:
        vector = ("elementwise", "reduction")
        if h is not None and h is not g and g.kind == h.kind == "opaque":
            # A value+index reduction reads two fills: one kernel for all three.
            return id(h) not in needs(g) and id(g) not in needs(h)
        if h is None or h is g or g.kind not in vector or h.kind not in vector:
            return False
        if g.domain != h.domain or len(g.ops) + len(h.ops) >= max_ops:
            return False
        if None not in (g.reduce_dims, h.reduce_dims) and g.reduce_dims != h.reduce_dims:
            return False
        return id(h) not in needs(g) and id(g) not in needs(h)

    for op in block.operations:
        operands = list(op.operands)
        joined = None
        if op.operation.name == "ascend.broadcast" and producer_group(operands[0]) is None:
            floating[op.operation] = op
            reach[op.results[0]] = set(reach.get(operands[0], set()))
            continue
        if is_copy_in_cast(op.operation):
            casts[op.operation] = op
            reach[op.results[0]] = set(reach.get(operands[0], set()))
            continue
        conv = producer_group(operands[0]) if is_copy_out_cast(op.operation) else None
        if conv is not None and conv.kind == "conv":
            # The conv kernel writes its result back ND: its epilogue then reads the ND tensor.
            conv.ops.append(op)
            group_of[op.operation] = conv
            reach[op.results[0]] = set(reach.get(operands[0], set()))
            continue
        if op.operation.name in ELEMENTWISE or op.operation.name == "ascend.reduce" or is_opaque(op):
            for v in reversed(operands):
                g = producer_group(v)
                if g is None or (g.kind in CUBE.values() and (not epilogue or _batched(g))):
                    continue
                # Two independent groups this op joins up become one kernel (layer norm's mean
                # and variance branches), so the op does not have to wait for a second launch.
                for o in operands:
                    if mergeable(g, producer_group(o)):
                        merge(g, producer_group(o))
                # An operand from outside g that depends on g would make kernel g wait on itself.
                if any(producer_group(o) is not g and id(g) in reach.get(o, ()) for o in operands):
                    continue
                if g.kind in CUBE.values() and not _epilogue_reads_fit(op, g, floating, producer_group):
                    continue
                if _try_join(g, op, max_ops):
                    joined = g
                    break
        if joined is None:
            joined = _new_group(op)
            if joined is not None:
                groups.append(joined)
        depends = set().union(*(reach.get(o, set()) for o in operands)) if operands else set()
        if joined is not None:
            group_of[op.operation] = joined
            depends = depends | {id(joined)}
            if op.operation.name not in CUBE:
                _claim_broadcasts(op, joined, floating, group_of, reach, max_ops)
            else:
                _claim_casts(op, joined, casts, group_of, reach)
        for r in op.results:
            reach[r] = depends
    for b in floating.values():
        groups.append(Group("elementwise", tensor_shape(b.results[0]), [b]))
    for c in casts.values():
        groups.append(Group("single", tensor_shape(c.results[0]), [c]))
    return groups


def _claim_casts(op: ir.OpView, group: Group, casts: dict, group_of: dict, reach: dict) -> None:
    """Put the copy-in casts of cube op `op`'s operands into its kernel, ahead of it."""
    for v in op.operands:
        c = casts.pop(v.owner.operation, None) if isinstance(v.owner, ir.OpView) else None
        if c is None:
            continue
        group.ops.insert(group.ops.index(op), c)
        group_of[c.operation] = group
        reach[c.results[0]] = reach[c.results[0]] | {id(group)}


def _batched(group: Group) -> bool:
    """A batch_matmul's kernel: lower-tiles tiles no epilogue for it, its consumers get their own kernel."""
    return any(op.operation.name == "ascend.batch_matmul" for op in group.ops)


def _epilogue_reads_fit(op: ir.OpView, group: Group, floating: dict, producer_group) -> bool:
    """Whether every tensor `op` reads from outside cube `group` (through a broadcast it would claim:
    the broadcast's source) is one the matmul epilogue can tile; else `op` starts a vector kernel."""
    for v in op.operands:
        if producer_group(v) is group:
            continue
        b = floating.get(v.owner.operation) if isinstance(v.owner, ir.OpView) else None
        shape = tensor_shape(b.operands[0] if b is not None else v)
        if shape and epilogue_layout(shape, group.domain) is None:
            return False
    return True


def _claim_broadcasts(op: ir.OpView, group: Group, floating: dict, group_of: dict, reach: dict,
                      max_ops: int) -> None:
    for v in op.operands:
        b = floating.get(v.owner.operation) if isinstance(v.owner, ir.OpView) else None
        if b is None or len(group.ops) >= max_ops or tensor_shape(b.results[0]) not in group.shapes():
            continue
        if id(group) in reach.get(b.operands[0], ()):
            continue
        del floating[b.operation]
        group.ops.insert(group.ops.index(op), b)
        group_of[b.operation] = group
        reach[b.results[0]] = reach[b.results[0]] | {id(group)}
