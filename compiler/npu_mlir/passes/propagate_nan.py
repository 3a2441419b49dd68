"""ascend-propagate-nan: torch's maximum, minimum, argmax and argmin see NaN; torch-mlir's lowering does not.

torch-mlir lowers aten.maximum / minimum (and hardtanh, which decomposes into them) to
`select(cmpf ogt|olt (a, b), a, b)`: an ordered compare is false when `a` is NaN, so
maximum(NaN, 0) gave 0 where torch gives NaN. Its argmax / argmin / max.dim / min.dim reductions
track the value with maximumf / minimumf (NaN-propagating) but move the index on
`cmpf ogt|olt (in, acc)`, so the index stayed before the first NaN where torch returns the NaN's.
Run on torch-mlir's output, before linalg fusion merges generics (one generic per aten op, so a
user's `torch.where(a > b, a, b)` - two ops, two generics - keeps its own semantics):
- `select(cmpf ogt (a, b), a, b)` -> `maximumf(a, b)`; olt -> `minimumf`;
- beside a maximumf / minimumf of the same operands, the index compare becomes
  `ogt|olt (in, acc) or (in is NaN and acc is not)`: the first NaN wins and keeps its index.
"""

from torch_mlir import ir
from torch_mlir.dialects import arith

OGT, OLT, ORD, UNO = 2, 4, 7, 14  # arith::CmpFPredicate
_EXTREME = {OGT: ("arith.maximumf", arith.MaximumFOp), OLT: ("arith.minimumf", arith.MinimumFOp)}


def _predicate(cmp: ir.Operation) -> int:
    return ir.IntegerAttr(cmp.attributes["predicate"]).value


def _defining(value: ir.Value) -> ir.Operation | None:
    owner = value.owner
    return owner.operation if hasattr(owner, "operation") and not isinstance(owner, ir.Block) else None


def _as_extreme(select: ir.Operation) -> bool:
    """select(cmpf ogt|olt (a, b), a, b) -> maximumf|minimumf (a, b)."""
    cmp = _defining(select.operands[0])
    if cmp is None or cmp.name != "arith.cmpf" or _predicate(cmp) not in _EXTREME:
        return False
    a, b = cmp.operands
    if select.operands[1] != a or select.operands[2] != b:
        return False
    with ir.InsertionPoint(select), select.location:
        extreme = _EXTREME[_predicate(cmp)][1](a, b).result
    select.results[0].replace_all_uses_with(extreme)
    select.erase()
    if not list(cmp.results[0].uses):
        cmp.erase()
    return True


def _cmpf(predicate: int, a: ir.Value, b: ir.Value) -> ir.Value:
    return arith.CmpFOp(ir.IntegerAttr.get(ir.IntegerType.get_signless(64), predicate), a, b).result


def _first_nan_wins(cmp: ir.Operation, body: list[ir.Operation]) -> None:
    """The index compare beside a maximumf / minimumf of the same operands also takes a first NaN."""
    if _predicate(cmp) not in _EXTREME:
        return
    name = _EXTREME[_predicate(cmp)][0]
    a, b = cmp.operands
    if not any(op.name == name and list(op.operands) == [a, b] for op in body):
        return
    with ir.InsertionPoint(cmp), cmp.location:
        new_nan = arith.AndIOp(_cmpf(UNO, a, a), _cmpf(ORD, b, b)).result
        taken = arith.OrIOp(_cmpf(_predicate(cmp), a, b), new_nan).result
    cmp.results[0].replace_all_uses_with(taken)
    cmp.erase()


def _rewrite(generic: ir.Operation) -> None:
    body = [o.operation for o in generic.regions[0].blocks[0].operations]
    for op in body:
        if op.name == "arith.select" and isinstance(op.results[0].type, ir.FloatType):
            _as_extreme(op)
    body = [o.operation for o in generic.regions[0].blocks[0].operations]
    if any("reduction" in str(it) for it in ir.ArrayAttr(generic.attributes["iterator_types"])):
        for op in body:
            if op.name == "arith.cmpf":
                _first_nan_wins(op, body)


def run(module: ir.Operation) -> bool:
    generics: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "linalg.generic":
            generics.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    for generic in generics:
        _rewrite(generic)
    return True
