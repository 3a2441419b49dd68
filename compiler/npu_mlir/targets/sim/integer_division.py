"""Integer division in a kernel never traps the host: a zero divisor fails the kernel instead.

x86's idiv raises SIGFPE for a zero divisor and for INT_MIN / -1, and the signal killed the user's
process from the stream worker (torch.remainder of int64 tensors with a zero in the divisor). The
device must not trap where an AI core does not. Each arith division or remainder on integers gets a
divisor that cannot trap (1 where it was 0, and where a signed INT_MIN meets -1: INT_MIN / 1 is the
wrapped quotient, INT_MIN % 1 the remainder 0) and a cf.assert that no divisor was zero, which
device_assert.py turns into the kernel's failure status: the next synchronization raises, as the
CPU's ZeroDivisionError does, and the process and device stay usable. Lanes of a vectorized tail
step past the data's end (masked loads' poison) are checked for nothing and divide by 1.
"""

from __future__ import annotations

import math

from torch_mlir import ir
from torch_mlir.dialects import arith, cf, vector

SIGNED = ("arith.divsi", "arith.remsi", "arith.floordivsi", "arith.ceildivsi")
UNSIGNED = ("arith.divui", "arith.remui", "arith.ceildivui")
ZERO_DIVISOR_MESSAGE = "integer division by zero (ZeroDivisionError)"
INDEX_BITS = 64  # `index` on the host the sim runs on (adaptive pooling's window bounds divide in it)


def _splat(like: ir.Type, value: int) -> ir.Value:
    element = like.element_type if isinstance(like, ir.VectorType) else like
    scalar = ir.IntegerAttr.get(element, value)
    attr = ir.DenseElementsAttr.get_splat(like, scalar) if isinstance(like, ir.VectorType) else scalar
    return arith.ConstantOp(like, attr).result


def _none(flags: ir.Value) -> ir.Value:
    """i1: no lane of `flags` is set."""
    i1 = ir.IntegerType.get_signless(1)
    if isinstance(flags.type, ir.VectorType):
        shape = flags.type.shape
        if len(shape) != 1:
            flags = vector.shape_cast(ir.VectorType.get([math.prod(shape)], i1), flags)
        flags = vector.reduction(i1, vector.CombiningKind.OR, flags)
    return arith.xori(flags, _splat(i1, 1))


def _live_lanes(divisor: ir.Value) -> list[ir.Value]:
    """The masks of the masked loads a vector divisor is computed from, lane by lane.

    A vectorized tail step loads past the data's end as poison (a masked load's pass-through): those
    lanes are never stored, and a zero there is no division the op makes."""
    masks, pending, seen = [], [divisor], set()
    while pending:
        value = pending.pop()
        owner = value.owner
        if not isinstance(owner, ir.OpView) or not isinstance(value.type, ir.VectorType):
            continue
        op = owner.operation
        if id(op) in seen:
            continue
        seen.add(id(op))
        if op.name == "vector.maskedload":
            masks.append(op.operands[len(op.operands) - 2])
        elif op.name.split(".")[0] in ("arith", "math"):
            pending += [v for v in op.operands if isinstance(v.type, ir.VectorType) and v.type.shape == value.type.shape]
    return masks


def _guard(op: ir.Operation) -> None:
    dividend, divisor = op.operands[0], op.operands[1]
    kind = divisor.type
    element = kind.element_type if isinstance(kind, ir.VectorType) else kind
    width = INDEX_BITS if isinstance(element, ir.IndexType) else element.width
    masks = _live_lanes(divisor) if isinstance(kind, ir.VectorType) else []
    with ir.InsertionPoint(op), op.location:
        live = None
        for mask in masks:
            live = mask if live is None else arith.andi(live, mask)
        zero = arith.cmpi(arith.CmpIPredicate.eq, divisor, _splat(kind, 0))
        if live is not None:
            # select, not and: `and` of a poison lane with false is still poison.
            zero = arith.select(live, zero, _splat(ir.VectorType.get(kind.shape, ir.IntegerType.get_signless(1)), 0))
        cf.AssertOp(_none(zero), ZERO_DIVISOR_MESSAGE)
        replace = zero
        if op.name in SIGNED:
            overflow = arith.andi(arith.cmpi(arith.CmpIPredicate.eq, dividend, _splat(kind, -(1 << (width - 1)))),
                                  arith.cmpi(arith.CmpIPredicate.eq, divisor, _splat(kind, -1)))
            replace = arith.ori(zero, overflow)
        safe = arith.select(replace, _splat(kind, 1), divisor)
        if live is not None:
            safe = arith.select(live, safe, _splat(kind, 1))  # a poison divisor is undefined behaviour in LLVM
    op.operands[1] = safe


def guard_integer_division(module: ir.Module | ir.Operation) -> int:
    """Guard every integer division and remainder in `module`; returns how many."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in SIGNED + UNSIGNED:
            found.append(op)
        return ir.WalkResult.ADVANCE

    root = module.operation
    root.walk(visit)
    with root.context:
        for op in found:
            _guard(op)
    return len(found)


def run(module: ir.Operation) -> None:
    """Registry entry point (npu-opt's `sim-guard-integer-division`)."""
    guard_integer_division(module)
