"""Which row reductions split across UB tiles (ascend-tile's col_tiles) have a two-level tile form.

Read by ascend-lower-tiles (passes/lower_tiles/split_rows.py) and the AscendC emitter
(targets/ascendc/split_rows.py), so both cover the same kernels: every full-row value computed from
the inputs alone, results row-shaped (sums, means, norms, max / min), in float or half. A value
computed from the finished reduction and broadcast back over the row (softmax, layer norm) needs a
second pass over the column tiles, and column-shaped operands a copy per tile.
"""

from __future__ import annotations

from torch_mlir import ir

from .kernel_model import KernelModel, analyze, body_ops, is_scalar_op

# How a tile's partial result folds into the row's accumulator, per reduce kind.
FOLD = {"sum": "Add", "mean": "Add", "max": "Max", "min": "Min"}


def split_row_refusal(kernel: ir.Operation, model: KernelModel) -> str | None:
    """Why this split-row kernel is outside what the emitter covers (None: covered)."""
    classes = {b.value: b.shape_class for b in model.buffers if b.value is not None}
    for b in model.buffers:
        if b.role == "work":  # ReduceSum's scratch: allocated here per reduced dtype
            continue
        if b.shape_class == "col":
            return "a column-shaped operand"
        if b.role == "out" and b.shape_class != "row":
            return "a full-row result"
        if b.role == "in" and b.shape_class != "full":
            return "a row-shaped input"
        if b.value is not None and str(ir.RankedTensorType(b.value.type).element_type) not in ("f32", "f16"):
            return f"a {ir.RankedTensorType(b.value.type).element_type} buffer (float and half only)"
    for op in body_ops(kernel):
        if is_scalar_op(op):
            continue
        if op.name == "ascend.broadcast":
            return "a row value broadcast back over the row (a second pass over the tiles)"
        if op.name == "ascend.reduce" and ir.StringAttr(op.attributes["kind"]).value not in FOLD:
            return f"a {ir.StringAttr(op.attributes['kind']).value} reduction"
        tensors = [v for v in op.operands if isinstance(v.type, ir.RankedTensorType)]
        if op.name != "ascend.reduce" and classes.get(op.results[0]) == "full" \
                and any(classes.get(v) == "row" for v in tensors):
            return "a full-row value computed from a row value"
    return None


def supported(kernel: ir.Operation) -> bool:
    return split_row_refusal(kernel, analyze(kernel)) is None
