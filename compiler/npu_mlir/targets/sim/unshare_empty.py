"""Give every use of a tensor.empty its own, before the sim bufferizes a kernel.

After CSE one empty tensor is the init of several ops; one-shot bufferization then lets them share
one buffer - possibly the output, which an unsliced producer would then write whole from every
block while the other blocks write their slices. (lowering.py runs no CSE between this and
bufferization, which would merge them again.)
"""

from __future__ import annotations

from torch_mlir import ir


def unshare_empty_tensors(module: ir.Module | ir.Operation) -> int:
    """Clone each tensor.empty with several uses once per further use; returns how many were shared."""
    shared = []

    def visit(op):
        if op.name == "tensor.empty" and len(list(op.results[0].uses)) > 1:
            shared.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for empty in shared:
        for use in list(empty.results[0].uses)[1:]:
            user = use.owner
            clone = empty.clone(ir.InsertionPoint(user))
            user.operands[use.operand_number] = clone.results[0]
    return len(shared)


def run(module: ir.Operation) -> bool:
    """The registered pass (sim-unshare-empty-tensors): `unshare_empty_tensors` on `module`."""
    unshare_empty_tensors(module)
    return True
