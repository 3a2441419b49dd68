"""Move bf16 data as i16 in a lowered kernel (LLVM dialect), so LLVM never holds a bf16 value.

x86 has no bf16 registers: LLVM keeps a bf16 value that lives across basic blocks (a phi) in an f32
register and rounds it back with a call to compiler-rt's `__truncsfbf2`, which the JIT cannot
resolve ("Failed to materialize symbols"). Such phis appear even when the kernel has none: GVN
forwards the zeros a padded tile was filled with into the transposing copy that reads it back
(tensor.pad -> linalg.transpose, the NZ format cast). After arith-emulate-unsupported-floats and
arith-expand every bf16 computation happens in f32, so the bf16 values left only move bits between
memory and registers; as i16 they do the same in integer registers, and bitcasts between the two
vanish. A kernel where any other op still touches bf16 is left as it is.

An n-d vector lowers to an LLVM array of vectors, so aggregates are retyped too (a splat aggregate
constant is rewritten with the same bits as i16). Left as bf16, a select of vector<9xbf16> (clamp
of an odd-sized last dim) or an aggregate of them carried across blocks (cummax) aborted LLVM ("Do
not know how to soft promote this operator's operand").
"""

from __future__ import annotations

import re
import struct

from torch_mlir import ir

# Ops that only move a value: retyping their bf16 operands and results to i16 keeps every bit.
_DATA_MOVES = frozenset({
    "llvm.load", "llvm.store", "llvm.getelementptr", "llvm.alloca", "llvm.bitcast", "llvm.select",
    "llvm.mlir.constant", "llvm.mlir.poison", "llvm.mlir.undef", "llvm.mlir.zero",
    "llvm.extractelement", "llvm.insertelement", "llvm.shufflevector", "llvm.br", "llvm.cond_br",
    "llvm.intr.masked.load", "llvm.intr.masked.store", "llvm.intr.masked.gather",
    "llvm.intr.masked.scatter", "llvm.extractvalue", "llvm.insertvalue",
})
# Attributes naming the element type an address computation or allocation steps by.
_ELEMENT_TYPE_ATTRS = ("elem_type",)


def _is_bf16(t: ir.Type) -> bool:
    """A bf16 scalar, a vector of them, or an LLVM aggregate holding either."""
    return "bf16" in str(t)


def _as_i16(t: ir.Type) -> ir.Type:
    """The i16 twin of a bf16 scalar, vector or aggregate type."""
    return ir.Type.parse(str(t).replace("bf16", "i16"))


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
            if op.name not in _DATA_MOVES or _unsplittable_constant(op):
                blocked.append(op.name)
            ops.append(op)
            values.extend(r for r in op.results if _is_bf16(r.type))
        for region in op.regions:
            for block in region.blocks:
                values.extend(a for a in block.arguments if _is_bf16(a.type))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return None if blocked else (ops, values)


def _is_aggregate(t: ir.Type) -> bool:
    return not isinstance(t, (ir.VectorType, ir.BF16Type))


def _splat_bits(op: ir.Operation) -> int | None:
    """The bf16 bits of a splat constant, as a signed i16; None if it is not a splat."""
    match = re.fullmatch(r"dense<([^\[\]<>,]+)> : .*", str(op.attributes["value"]))
    if match is None:
        return None
    literal = match.group(1).strip()
    if literal.startswith("0x"):
        bits = int(literal, 16)
    else:  # printed exactly: a bf16 value is an f32 whose low 16 bits are zero
        bits = struct.unpack("<I", struct.pack("<f", float(literal)))[0] >> 16
    return bits - (1 << 16) if bits >= 1 << 15 else bits


def _unsplittable_constant(op: ir.Operation) -> bool:
    """An aggregate constant that is no splat: its bits cannot be rewritten (the bindings cannot read them)."""
    return (op.name == "llvm.mlir.constant" and _is_aggregate(op.results[0].type)
            and _splat_bits(op) is None)


def _retype_constant(op: ir.Operation) -> None:
    i16 = _as_i16(op.results[0].type)
    if _is_aggregate(op.results[0].type):
        # An aggregate cannot be bitcast: the same splat, written as i16.
        shaped = str(op.attributes["value"]).split(" : ", 1)[1].replace("bf16", "i16")
        value = ir.Attribute.parse(f"dense<{_splat_bits(op)}> : {shaped}")
        with ir.InsertionPoint(op), op.location:
            twin = ir.Operation.create("llvm.mlir.constant", results=[i16], attributes={"value": value})
        op.results[0].replace_all_uses_with(twin.results[0])
        op.erase()
        return
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
    bitcasts = [op for op in ops if op.name == "llvm.bitcast"]
    for op in constants:
        _retype_constant(op)
    for op in bitcasts:
        if op.operands[0].type == op.results[0].type:
            op.results[0].replace_all_uses_with(op.operands[0])
            op.erase()
    return True


def run(module: ir.Operation) -> bool:
    """The registered pass (sim-bf16-storage): `store_bf16_as_i16` on a module lowered to the LLVM
    dialect. A module where some op still computes on bf16 is left as it is, which is no failure."""
    store_bf16_as_i16(module)
    return True
