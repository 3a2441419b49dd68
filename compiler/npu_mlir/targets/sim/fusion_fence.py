"""Keep costly elementwise ops out of the contractions that would recompute them.

linalg-fuse-elementwise-ops fuses a single-use elementwise producer into its consumer's loop nest.
When the consumer is a contraction that reads each producer element once per value of another
parallel loop - attention's probabilities exp(s - max) / sum feeding probs @ v are re-evaluated for
every one of the D output columns - fusion multiplies the producer's math by that loop's range
(measured: the attention forward, B=1 N=8 S=256 D=64, 27-50 ms fused, 15 ms fenced). Such producers
are fenced before the fusion pipeline: a call to an external function gives their result a second
use, which the pass's single-use rule respects, and the calls are erased after the last fusion.
Cheap producers (casts, selects, transposes: no math op, no division) still fuse, saving a trip
through memory.

A reshape that merges a matmul's reduction dim is fenced too: the fusion pass would fold it into
the matmul by expanding the loop nest, one reduction loop per merged dim (the (C*Kh*Kw, N*H*W)
columns of a convolution lowered as a GEMM become a 7-d loop nest with three reductions), which
the tiling rules no longer see as a contraction - and a gather producing the columns would then
be fused into it, re-reading the input per output channel (measured: a 3x3 conv 4x64x8x8 -> 64,
11.7 ms expanded, 1.9 ms fenced, 8 blocks). So is a matmul whose result is expanded: folding that
expand_shape reshapes its operands and then merges their collapses all the same.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects import func

FENCE = "npu_sim_fusion_fence"
# Named ops are generalized (or unit dims folded) inside the fusion pipeline: fences go in first.
NAMED_CONTRACTIONS = ("linalg.matmul", "linalg.batch_matmul", "linalg.matmul_transpose_a", "linalg.matmul_transpose_b",
                      "linalg.batch_matmul_transpose_a", "linalg.batch_matmul_transpose_b")


def _costly(op: ir.Operation) -> bool:
    names = [inner.operation.name for inner in op.regions[0].blocks[0].operations]
    return any(n.startswith("math.") or n in ("arith.divf", "arith.remf") for n in names)


def _elementwise(op: ir.Operation) -> bool:
    return (op.name == "linalg.generic" and len(op.results) == 1
            and all("parallel" in str(it) for it in ir.ArrayAttr(op.attributes["iterator_types"])))


def _reused(consumer: ir.Operation, operand_number: int) -> bool:
    """The consumer reads this operand's elements repeatedly along a parallel loop it does not index."""
    if consumer.name in NAMED_CONTRACTIONS:
        return operand_number < 2  # A is read once per column of the result, B once per row
    if consumer.name != "linalg.generic":
        return False
    iterators = [str(it) for it in ir.ArrayAttr(consumer.attributes["iterator_types"])]
    if all("parallel" in it for it in iterators):
        return False
    amap = ir.AffineMapAttr(ir.ArrayAttr(consumer.attributes["indexing_maps"])[operand_number]).value
    used = {ir.AffineDimExpr(e).position for e in amap.results if isinstance(e, ir.AffineDimExpr)}
    return any("parallel" in it and d not in used for d, it in enumerate(iterators))


def _final_use(value: ir.Value) -> ir.OpOperand | None:
    """The single use of value, looking through the reshapes torch-mlir puts before a batch matmul
    (the fusion pass folds them into the consumer's indexing maps)."""
    while True:
        uses = list(value.uses)
        if len(uses) != 1:
            return None
        owner = uses[0].owner
        if owner.name not in ("tensor.collapse_shape", "tensor.expand_shape"):
            return uses[0]
        value = owner.results[0]


# Dim of each operand that a named matmul reduces over (negative: from the end).
REDUCED_DIM = {"linalg.matmul": (-1, -2), "linalg.batch_matmul": (-1, -2)}


def _merges_reduced_dim(reshape: ir.Operation) -> bool:
    """A collapse_shape whose result feeds a matmul and merges several dims into its reduced one."""
    if reshape.name != "tensor.collapse_shape":
        return False
    uses = list(reshape.results[0].uses)
    if len(uses) != 1 or uses[0].owner.name not in REDUCED_DIM:
        return False
    dims = REDUCED_DIM[uses[0].owner.name]
    if uses[0].operand_number >= len(dims):
        return False
    groups = list(ir.ArrayAttr(reshape.attributes["reassociation"]))
    return len(ir.ArrayAttr(groups[dims[uses[0].operand_number]])) > 1


def _expanded(value: ir.Value) -> bool:
    uses = list(value.uses)
    return len(uses) == 1 and uses[0].owner.name == "tensor.expand_shape"


def fence_recomputed_producers(module: ir.Module) -> None:
    """Fence each costly elementwise producer a contraction would recompute, and each reshape
    merging a matmul's reduced dim (undo: remove_fences)."""
    values = []

    def visit(op):
        if _elementwise(op) and _costly(op):
            use = _final_use(op.results[0])
            if use is not None and _reused(use.owner, use.operand_number):
                values.append(op.results[0])
        elif _merges_reduced_dim(op):
            values.append(op.results[0])
        elif op.name in REDUCED_DIM and op.results and _expanded(op.results[0]):  # memref ops have none
            values.append(op.results[0])
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for n, value in enumerate(values):
        name = f"{FENCE}_{n}"
        producer = value.owner
        with ir.InsertionPoint(module.operation.regions[0].blocks[0]), producer.location:
            func.FuncOp(name, ir.FunctionType.get([value.type], []), visibility="private")
        with ir.InsertionPoint.after(producer), producer.location:
            func.CallOp([], ir.FlatSymbolRefAttr.get(name), [value])


def remove_fences(module: ir.Module) -> None:
    # Found by name: the passes run in between invalidate Python handles to the ops.
    fences = []

    def visit(op):
        if op.name == "func.call" and ir.FlatSymbolRefAttr(op.attributes["callee"]).value.startswith(FENCE):
            fences.append(op)
        elif op.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value.startswith(FENCE):
            fences.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for op in fences:
        op.erase()


def run(module: ir.Operation, *, remove: bool = False) -> bool:
    """The registered pass (sim-fusion-fence): fence the producers before the fusion passes, and with
    `remove` erase the fences after them, as the sim's lowering does around its linalg fusion."""
    (remove_fences if remove else fence_recomputed_producers)(module)
    return True
