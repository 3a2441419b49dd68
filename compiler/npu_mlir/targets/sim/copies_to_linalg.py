"""memref.copy as linalg.copy in a bufferized kernel, so it lowers to plain loops.

A memref.copy between non-contiguous buffers lowers to a call into MLIR's C runner library
(`memrefCopy`), which a kernel .so cannot link; as linalg.copy it becomes loops (and the sim's
copy vectorization sees it).
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import linalg


def copies_to_linalg(module: ir.Module | ir.Operation) -> int:
    """Replace every memref.copy of `module` with a linalg.copy; returns how many."""
    copies = []

    def visit(op):
        if op.name == "memref.copy":
            copies.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for op in copies:
        with ir.InsertionPoint(op), op.location:
            linalg.copy(op.operands[0], outs=[op.operands[1]])
        op.erase()
    return len(copies)


def run(module: ir.Operation) -> bool:
    """The registered pass (sim-copies-to-linalg): `copies_to_linalg` on `module`."""
    copies_to_linalg(module)
    return True
