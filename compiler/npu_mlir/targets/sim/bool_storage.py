"""Store vectors of i1 one byte per element in a lowered kernel (LLVM dialect).

A memref<...xi1> holds one byte per element: memref.load / memref.store and every address
computation step by bytes. LLVM lays a vector<Nxi1> out in memory as N packed bits, so a mask
written by a vectorized loop and read by a scalar or differently vectorized one comes back wrong,
silently (index_put with a boolean mask read its cumulative count of True as 0 and 1; see
predicates.py for the case that first showed it). Every vector of i1 therefore goes to memory as a
vector of i8 (zext before a store, trunc after a load), which is the byte layout the scalar
accesses already use. Registers keep i1 vectors: only loads and stores change.
"""

from __future__ import annotations

from torch_mlir import ir

# Op name -> (index of the stored vector operand or None, index of the pass-through operand or None).
_LOADS = {"llvm.load": None, "llvm.intr.masked.load": 2, "llvm.intr.masked.gather": 2}
_STORES = {"llvm.store": 0, "llvm.intr.masked.store": 0, "llvm.intr.masked.scatter": 0}


def _is_bool_vector(t: ir.Type) -> bool:
    return isinstance(t, ir.VectorType) and str(t.element_type) == "i1"


def _as_bytes(t: ir.VectorType) -> ir.VectorType:
    return ir.VectorType.get(t.shape, ir.IntegerType.get_signless(8))


def _recreate(op: ir.Operation, operands: list[ir.Value], results: list[ir.Type]) -> ir.Operation:
    with ir.InsertionPoint(op), op.location:
        return ir.Operation.create(op.name, results=results, operands=operands,
                                   attributes={name: op.attributes[name] for name in op.attributes})


def _widen(value: ir.Value, before: ir.Operation) -> ir.Value:
    with ir.InsertionPoint(before), before.location:
        return ir.Operation.create("llvm.zext", results=[_as_bytes(value.type)], operands=[value]).results[0]


def _rewrite_load(op: ir.Operation, passthru: int | None) -> None:
    result = op.results[0]
    operands = list(op.operands)
    if passthru is not None:
        operands[passthru] = _widen(operands[passthru], op)
    load = _recreate(op, operands, [_as_bytes(result.type)])
    with ir.InsertionPoint(op), op.location:
        bools = ir.Operation.create("llvm.trunc", results=[result.type], operands=[load.results[0]])
    result.replace_all_uses_with(bools.results[0])
    op.erase()


def _rewrite_store(op: ir.Operation, stored: int) -> None:
    operands = list(op.operands)
    operands[stored] = _widen(operands[stored], op)
    _recreate(op, operands, [])
    op.erase()


def store_bools_as_bytes(module: ir.Operation) -> int:
    """Rewrite every load and store of an i1 vector in `module`; returns how many were rewritten."""
    loads, stores = [], []

    def visit(op):
        if op.name in _LOADS and _is_bool_vector(op.results[0].type):
            loads.append(op)
        elif op.name in _STORES and _is_bool_vector(op.operands[_STORES[op.name]].type):
            stores.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    for op in loads:
        _rewrite_load(op, _LOADS[op.name])
    for op in stores:
        _rewrite_store(op, _STORES[op.name])
    return len(loads) + len(stores)


def run(module: ir.Operation) -> bool:
    """The registered pass (sim-bool-storage) on a module lowered to the LLVM dialect."""
    store_bools_as_bytes(module)
    return True
