"""Move bf16 data as i16 in a lowered kernel (LLVM dialect), so LLVM never holds a bf16 value.

x86 has no bf16 registers: LLVM keeps a bf16 value that lives across basic blocks (a phi) in an f32
register and rounds it back with a call to compiler-rt's `__truncsfbf2`, which the JIT cannot
resolve ("Failed to materialize symbols"). Such phis appear even when the kernel has none: GVN
forwards the zeros a padded tile was filled with into the transposing copy that reads it back
(tensor.pad -> linalg.transpose, the NZ format cast). After arith-emulate-unsupported-floats and
arith-expand every bf16 computation happens in f32, so the bf16 values left only move bits between
memory and registers; as i16 they do the same in integer registers, and bitcasts between the two
vanish. A kernel where any other op still touches bf16 is left as it is.
"""

from __future__ import annotations

from torch_mlir import ir

# Ops that only move a value: retyping their bf16 operands and results to i16 keeps every bit.
_DATA_MOVES = frozenset({
    "llvm.load", "llvm.store", "llvm.getelementptr", "llvm.alloca", "llvm.bitcast", "llvm.select",
    "llvm.mlir.constant", "llvm.mlir.poison", "llvm.mlir.undef", "llvm.mlir.zero",
    "llvm.extractelement", "llvm.insertelement", "llvm.shufflevector", "llvm.br", "llvm.cond_br",
    "llvm.intr.masked.load", "llvm.intr.masked.store", "llvm.intr.masked.gather",
    "llvm.intr.masked.scatter",
})
# Attributes naming the element type an address computation or allocation steps by.
_ELEMENT_TYPE_ATTRS = ("elem_type",)


def _is_bf16(t: ir.Type) -> bool:
    element = t.element_type if isinstance(t, ir.VectorType) else t
    return isinstance(element, ir.BF16Type)


def _as_i16(t: ir.Type) -> ir.Type:
    """The i16 twin of a bf16 scalar or vector type."""
    i16 = ir.IntegerType.get_signless(16)
    if isinstance(t, ir.VectorType):
        return ir.VectorType.get(t.shape, i16, scalable=t.scalable_dims if t.scalable else None)
    return i16


def _collect(module: ir.Module) -> tuple[list[ir.Operation], list[ir.Value]] | None:
    """Ops and values to retype, or None when some op computes on bf16 (nothing is changed then)."""
    ops, values, blocked = [], [], []

    def visit(op):
        if op.name == "llvm.func" and "bf16" in str(op.attributes["function_type"]):
            blocked.append(op.name)
        touches = any(_is_bf16(v.type) for v in list(op.operands) + list(op.results))
        typed = [name for name in _ELEMENT_TYPE_ATTRS
                 if name in op.attributes and _is_bf16(ir.TypeAttr(op.attributes[name]).value)]
        if touches or typed:
            if op.name not in _DATA_MOVES:
                blocked.append(op.name)
            ops.append(op)
            values.extend(r for r in op.results if _is_bf16(r.type))
        for region in op.regions:
            for block in region.blocks:
                values.extend(a for a in block.arguments if _is_bf16(a.type))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return None if blocked else (ops, values)


def _retype_constant(op: ir.Operation, i16: ir.Type) -> None:
    # A bf16 constant stays as written and is reinterpreted right after: the Python bindings cannot
    # read a non-splat bf16 vector attribute, and LLVM folds the cast of a constant as it emits it.
    uses = list(op.results[0].uses)
    after = list(op.block.operations)[_position(op) + 1]  # a constant is never the terminator
    with ir.InsertionPoint(after), op.location:
        cast = ir.Operation.create("llvm.bitcast", results=[i16], operands=[op.results[0]])
    for use in uses:
        use.owner.operands[use.operand_number] = cast.results[0]


def _position(op: ir.Operation) -> int:
    return next(i for i, o in enumerate(op.block.operations) if o.operation == op)


def store_bf16_as_i16(module: ir.Module) -> bool:
    """Retype every bf16 value of `module` (LLVM dialect) to i16; False if some op computes on bf16."""
    found = _collect(module)
    if found is None:
        return False
    ops, values = found
    constants = [op for op in ops if op.name == "llvm.mlir.constant"]
    for value in values:
        if not (isinstance(value, ir.OpResult) and value.owner.name == "llvm.mlir.constant"):
            value.set_type(_as_i16(value.type))
    for op in ops:
        for name in _ELEMENT_TYPE_ATTRS:
            if name in op.attributes and _is_bf16(ir.TypeAttr(op.attributes[name]).value):
                op.attributes[name] = ir.TypeAttr.get(_as_i16(ir.TypeAttr(op.attributes[name]).value))
    for op in constants:
        _retype_constant(op, _as_i16(op.results[0].type))
    for op in ops:
        if op.name == "llvm.bitcast" and op.operands[0].type == op.results[0].type:
            op.results[0].replace_all_uses_with(op.operands[0])
            op.erase()
    return True


def run(module: ir.Operation) -> bool:
    """The registered pass (sim-bf16-storage): `store_bf16_as_i16` on a module lowered to the LLVM
    dialect. A module where some op still computes on bf16 is left as it is, which is no failure."""
    store_bf16_as_i16(module)
    return True
