"""Tile-level program of a row reduction whose row is split across UB tiles (tiling col_tiles).

Per block: rows block_idx * block_rows onward (the last block takes last_block_rows), one row at a
time. Each row's accumulators (one per reduction, a [1] UB buffer) start at the reduction's identity
(vdup); an scf.for walks the row in column tiles of col_tile elements (the last one a tail): copy
the inputs' tile in (MTE2), compute the elementwise prologue on [1, len] UB views (V), reduce the
tile into a partial result and fold it into the accumulator (vbinary add / max / min). After the
row's last tile the row-shaped epilogue runs on the accumulators (a mean divides by cols) and each
result's element is copied out (MTE3). Covered kernels: analysis/split_rows.py, as the AscendC
emitter's (targets/ascendc/split_rows.py).
"""

from __future__ import annotations

from torch_mlir import ir

from ...analysis.kernel_model import KernelModel, body_ops, is_scalar_op
from ...analysis.split_rows import split_row_refusal
from .program import Program, View, contiguous_strides, vtype
from .vector import KEPT_ATTRS, VECTOR_TILE_OPS, tile_operands

FOLD_KIND = {"sum": "add", "mean": "add", "max": "max", "min": "min"}


def _identity(kind: str, elt: str) -> str:
    return {"sum": "0.0", "mean": "0.0", "max": "0xFF800000" if elt == "f32" else "0xFC00",
            "min": "0x7F800000" if elt == "f32" else "0x7C00"}[kind]


def lower(kernel: ir.Operation, model: KernelModel, t: dict[str, int], align: int
          ) -> tuple[Program, list[tuple[str, str]]] | None:
    """The program, or None for a split-row kernel outside analysis/split_rows.py's cover."""
    if split_row_refusal(kernel, model) is not None:
        return None
    p = Program()
    block = kernel.regions[0].blocks[0]
    args = {a: f"%arg{i}" for i, a in enumerate(block.arguments)}
    rows, cols, col_tile = t["rows"], t["cols"], t["col_tile"]
    gm: dict[ir.Value, View] = {}
    ub: dict[ir.Value, View] = {}
    results, res_lines = [], []
    row_elems = t["align_elems"]  # one element used: a row buffer holds one aligned block
    for b in model.buffers:
        if b.role == "work":  # the AscendC ReduceSum's scratch
            continue
        tt = ir.RankedTensorType(b.value.type)
        elt = str(tt.element_type)
        if b.role == "in":
            gm[b.value] = p.global_view(args[b.value], str(tt), list(tt.shape), elt, [rows, cols])
        elif b.role == "out":
            buf = View(p.fresh("out"), list(tt.shape), elt, "gm", contiguous_strides(list(tt.shape)))
            p.emit(f"{buf.name} = memref.alloc() : {buf.type}")
            res_lines.append((buf, str(tt)))
            gm[b.value] = p.reshape(buf, [rows])
        shape = [1, col_tile] if b.shape_class == "full" else [row_elems]
        ub[b.value] = p.alloc(shape, elt, "ub", b.elem_bytes, b.depth, align)
    reduces = [op for op in body_ops(kernel) if op.name == "ascend.reduce"]
    partial = {op.results[0]: p.alloc([row_elems], str(ir.RankedTensorType(op.results[0].type).element_type), "ub",
                                      ir.RankedTensorType(op.results[0].type).element_type.width // 8, 1, align)
               for op in reduces}
    bid = p.value('"ascend.block_idx"() : () -> index', "bid")
    bnum = p.value('"ascend.block_num"() : () -> index', "bnum")
    is_last = p.value(f"arith.cmpi eq, {bid}, {p.arith('subi', bnum, 1)} : index", "last")
    nrows = p.value(f"arith.select {is_last}, {p.index(t['last_block_rows'])}, {p.index(t['block_rows'])} : index",
                    "nrows")
    start = p.arith("muli", bid, t["block_rows"], "start")
    r = p.fresh("r")
    p.emit(f"scf.for {r} = {p.index(0)} to {nrows} step {p.index(1)} {{")
    row = p.arith("addi", start, r, "row")
    one = {v: p.subview(view, [0], [1]) for v, view in ub.items() if len(view.shape) == 1}
    consts: dict[ir.Value, str] = {}
    for op in reduces:
        kind, elt = ir.StringAttr(op.attributes["kind"]).value, str(ir.RankedTensorType(op.results[0].type).element_type)
        ident = p.value(f"arith.constant {_identity(kind, elt)} : {elt}", "id")
        acc = one[op.results[0]]
        p.op("vdup", [(ident, elt), (acc.name, vtype(acc))])
    c = p.fresh("c")
    p.emit(f"scf.for {c} = {p.index(0)} to {p.index(cols)} step {p.index(col_tile)} {{")
    n = p.arith("minsi", p.arith("subi", cols, c), col_tile, "n")
    tile = {v: p.subview(view, [0, 0], [1, n]) for v, view in ub.items() if len(view.shape) == 2}
    for b in model.buffers:
        if b.role == "in":
            src = p.subview(gm[b.value], [row, c], [1, n])
            p.op("copy_in", [(src.name, vtype(src)), (tile[b.value].name, vtype(tile[b.value]))])
    p.sync("MTE2", "V")
    epilogue = []
    for op in body_ops(kernel):
        if is_scalar_op(op):
            continue
        if op.name == "ascend.reduce":
            kind = ir.StringAttr(op.attributes["kind"]).value
            src, part, acc = tile[op.operands[0]], p.subview(partial[op.results[0]], [0], [1]), one[op.results[0]]
            p.op("vreduce", [(src.name, vtype(src)), (part.name, vtype(part))],
                 f'kind = "{"sum" if kind == "mean" else kind}", dims = array<i64: 1>')
            p.op("vbinary", [(acc.name, vtype(acc)), (part.name, vtype(part)), (acc.name, vtype(acc))],
                 f'kind = "{FOLD_KIND[kind]}"')
            if kind == "mean":
                epilogue.append(("mean", op))
        elif op.results[0] in tile:
            _vector_op(p, op, tile, args, consts)
        else:
            epilogue.append(("op", op))
    p.sync("V", "MTE2")  # the next tile's copy-in overwrites the input tiles this one read
    p.emit("}")
    for what, op in epilogue:
        if what == "mean":
            acc, elt = one[op.results[0]], str(ir.RankedTensorType(op.results[0].type).element_type)
            count = p.value(f"arith.constant {float(cols)!r} : {elt}", "count")
            p.op("vbinary", [(acc.name, vtype(acc)), (count, elt), (acc.name, vtype(acc))], 'kind = "div"')
        else:
            _vector_op(p, op, one, args, consts)
    p.sync("V", "MTE3")
    for b in model.buffers:
        if b.role == "out":
            dst = p.subview(gm[b.value], [row], [1])
            p.op("copy_out", [(one[b.value].name, vtype(one[b.value])), (dst.name, vtype(dst))])
    p.sync("MTE3", "V")  # the next row's accumulators overwrite what this row's copy-out reads
    p.emit("}")
    for buf, ttype in res_lines:
        name = p.value(f"bufferization.to_tensor {buf.name} restrict : {buf.type} to {ttype}", "res")
        results.append((name, ttype))
    return p, results


def _vector_op(p: Program, op: ir.Operation, local: dict[ir.Value, View], args: dict, consts: dict) -> None:
    operands = tile_operands(p, op, local, args, consts)
    dst = local[op.results[0]]
    attrs = [f"{a} = {op.attributes[a]}" for a in KEPT_ATTRS if a in op.attributes]
    p.op(VECTOR_TILE_OPS[op.name], operands + [(dst.name, vtype(dst))], ", ".join(attrs))
