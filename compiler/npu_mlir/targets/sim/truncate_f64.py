"""Narrow f64 to f16 / bf16 through f32 in a kernel lowered to loops, so LLVM calls no compiler-rt.

A conversion from f64 to f16 / bf16 (a float parameter narrowed to a half tensor's dtype: var's
correction, pow's exponent) becomes a call to compiler-rt's `__truncdfhf2` / `__truncdfbf2`, which
the JIT cannot resolve ("Failed to materialize symbols"). Going through f32 needs none. Both steps
round to nearest even; that equals the direct rounding except for an f64 within 2^-24 relative of a
half-way point (the CPU computes these ops in float and rounds the same two steps).
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import arith


def _element(t: ir.Type) -> ir.Type:
    return t.element_type if isinstance(t, ir.VectorType) else t


def truncate_f64_through_f32(module: ir.Module) -> int:
    """Split each arith.truncf from f64 to f16 / bf16 into two through f32; returns how many."""
    found = []

    def visit(op):
        if op.name == "arith.truncf" and isinstance(_element(op.operands[0].type), ir.F64Type) and \
                isinstance(_element(op.results[0].type), (ir.F16Type, ir.BF16Type)):
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for op in found:
        source, result = op.operands[0].type, op.results[0].type
        f32 = ir.VectorType.get(source.shape, ir.F32Type.get()) if isinstance(source, ir.VectorType) else ir.F32Type.get()
        with ir.InsertionPoint(op), op.location:
            narrowed = arith.TruncFOp(result, arith.TruncFOp(f32, op.operands[0]).result).result
        op.results[0].replace_all_uses_with(narrowed)
        op.erase()
    return len(found)


def run(module: ir.Operation) -> bool:
    """The registered pass (sim-truncate-f64): `truncate_f64_through_f32` on `module`."""
    truncate_f64_through_f32(module)
    return True
