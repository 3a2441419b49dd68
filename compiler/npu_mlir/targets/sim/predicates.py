"""Keep boolean intermediates out of memory: clone each shared i1 elementwise op per consumer.

An i1 tensor that two consumers read is not fused into either, so it is bufferized into a
memref<...xi1>. LLVM stores a vector<8xi1> as eight packed bits, while scalar and strided
accesses to the same memref address one byte per element: a mask written by a vectorized loop and
read along another dimension (attention's dropout or padding mask, read transposed by dV = P^T dO
and row-wise by the softmax backward) comes back wrong. A compare or a truncation is cheaper to
recompute than to store, so each use gets its own copy, which linalg-fuse-elementwise-ops then
folds into that consumer. The sim's lowering runs it on every kernel; `npu-opt --sim-predicates`
runs it alone.
"""

from __future__ import annotations

from torch_mlir import ir


def _is_shared_predicate(op: ir.Operation) -> bool:
    if op.name != "linalg.generic" or len(op.results) != 1:
        return False
    result_type = op.results[0].type
    if not isinstance(result_type, ir.RankedTensorType) or str(result_type.element_type) != "i1":
        return False
    iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    return all("parallel" in it for it in iterators) and len(list(op.results[0].uses)) > 1


def duplicate_shared_predicates(module: ir.Module) -> None:
    run(module.operation)


def run(module: ir.Operation) -> bool:
    """The registered pass (sim-predicates): each shared i1 elementwise op cloned per consumer."""
    shared = []

    def visit(op):
        if _is_shared_predicate(op):
            shared.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    for op in shared:
        for use in list(op.results[0].uses)[1:]:
            clone = op.clone(ir.InsertionPoint(use.owner))
            use.owner.operands[use.operand_number] = clone.results[0]
    return True
