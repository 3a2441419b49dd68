"""ascend-split-index-checks: an index check that guards no memory access becomes a generic of its own.

The scatter-free decompositions check their indices with a gather from `arange(size)`
(frontend/decompositions/bounds.py): a linalg.generic whose body asserts both bounds of each index
and reads `arange[index]`, which is the index itself. Left whole, linalg elementwise fusion copies
the asserts into every consumer, and a reduction carrying a cf.assert no longer raises to ascend
ops: the whole comparison-and-reduction becomes one opaque single-block kernel. So, before fusion:
- a read of an identity arange (`tensor.extract %arange[%i]`) becomes `index_cast %i`;
- a generic whose body then asserts but reads nothing through tensor.extract is cloned without its
  asserts, and its users take the clone. The original keeps only the checks (its result is dead, the
  asserts keep it alive; fusion drops the dead result), and ascend-fuse puts it in a kernel.
A generic whose asserts do guard a read (torch.gather's own lowering) keeps them in place: the kernel
must return before the out-of-range access (targets/sim/device_assert.py).
"""

from torch_mlir import ir
from torch_mlir.dialects import arith


def _body(op: ir.Operation) -> list[ir.Operation]:
    return [o.operation for o in op.regions[0].blocks[0].operations]


def _is_identity_arange(value: ir.Value) -> bool:
    """`value` is a 1-d linalg.generic yielding index_cast(linalg.index 0): element i holds i."""
    owner = value.owner
    if not isinstance(owner, ir.Operation) and hasattr(owner, "operation"):
        owner = owner.operation
    if not isinstance(owner, ir.Operation) or owner.name != "linalg.generic" or len(owner.regions) != 1:
        return False
    body = _body(owner)
    if [o.name for o in body] != ["linalg.index", "arith.index_cast", "linalg.yield"]:
        return False
    index, cast, yielded = body
    return (ir.IntegerAttr(index.attributes["dim"]).value == 0 and cast.operands[0] == index.results[0]
            and yielded.operands[0] == cast.results[0] and len(ir.RankedTensorType(value.type).shape) == 1)


def _fold_arange_reads(generic: ir.Operation) -> None:
    for op in _body(generic):
        if op.name == "tensor.extract" and len(op.operands) == 2 and _is_identity_arange(op.operands[0]):
            with ir.InsertionPoint(op), op.location:
                value = arith.IndexCastOp(op.results[0].type, op.operands[1]).result
            op.results[0].replace_all_uses_with(value)
            op.erase()


def _split(generic: ir.Operation) -> None:
    body = _body(generic)
    if not any(o.name == "cf.assert" for o in body) or any(o.name == "tensor.extract" for o in body):
        return
    if not generic.results or not any(list(r.uses) for r in generic.results):
        return
    unchecked = generic.clone(ir.InsertionPoint(generic))
    for op in _body(unchecked):
        if op.name == "cf.assert":
            op.erase()
    for old, new in zip(generic.results, unchecked.results):
        old.replace_all_uses_with(new)


def run(module: ir.Operation) -> bool:
    generics: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "linalg.generic" and any(o.name == "cf.assert" for o in _body(op)):
            generics.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    for generic in generics:
        _fold_arange_reads(generic)
        _split(generic)
    return True
