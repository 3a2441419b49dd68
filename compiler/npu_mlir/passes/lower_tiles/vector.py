"""Tile-level program of a vector kernel (tiling kinds elementwise and row).

Per block: this block's share of the work starts at block_idx * block_elems (block_rows), the
last block takes the remainder; an scf.for walks it in tiles with a tail tile of the leftover
size. Each iteration copies the inputs' tiles to UB (MTE2), runs the vector ops on UB views
(V), copies the outputs back (MTE3), with set_flag/wait_flag between the pipes.
"""

from __future__ import annotations

from math import ceil

from torch_mlir import ir

from ...analysis.kernel_model import SCALAR_BINARY, SCALAR_CASTS, Buffer, KernelModel, body_ops, is_scalar_op
from ...analysis.memory_plan import slots_of
from .program import Program, Size, View, contiguous_strides, vtype

VECTOR_TILE_OPS = {"ascend.unary": "vunary", "ascend.binary": "vbinary", "ascend.ternary": "vternary",
           "ascend.cast": "vcast", "ascend.compare": "vcompare", "ascend.select": "vselect",
           "ascend.reduce": "vreduce", "ascend.broadcast": "vbroadcast"}
KEPT_ATTRS = ("kind", "predicate")


def _tensor(v: ir.Value) -> ir.RankedTensorType:
    return ir.RankedTensorType(v.type)


def _shape(b: Buffer, model: KernelModel, kind: str) -> list[int]:
    if kind == "elementwise":
        return [model.cols]
    return {"full": [model.rows, model.cols], "row": [model.rows], "col": [model.cols]}[b.shape_class]


def _local_shape(b: Buffer, t: dict[str, int], kind: str) -> list[int]:
    if kind == "elementwise":
        return [t["tile_elems"]]
    return {"full": [t["tile_rows"], t["cols_aligned"]],
            "row": [ceil(t["tile_rows"] / t["align_elems"]) * t["align_elems"]],
            "col": [t["cols_aligned"]]}[b.shape_class]


def _tile(p: Program, v: View, b: Buffer, t: dict[str, int], kind: str, off: Size, n: Size, local: bool) -> View:
    """The current tile of buffer `v`: at `off` in global memory, at 0 in UB."""
    cols = t.get("cols", 0)
    if kind == "elementwise" or b.shape_class == "row":
        return p.subview(v, [0 if local else off], [n])
    if b.shape_class == "col":
        return p.subview(v, [0], [cols])
    return p.subview(v, [0, 0] if local else [off, 0], [n, cols])


def tile_operands(p: Program, op: ir.Operation, local: dict[ir.Value, View], args: dict,
                  consts: dict) -> list[tuple[str, str]]:
    """(name, type) of each operand of a vector tile op: a tensor's UB view, a scalar's value."""
    return [(local[v].name, vtype(local[v])) if isinstance(v.type, ir.RankedTensorType)
            else (scalar_operand(p, v, args, consts), str(v.type)) for v in op.operands]


def scalar_operand(p: Program, v: ir.Value, args: dict[ir.Value, str], consts: dict[ir.Value, str]) -> str:
    """The SSA name of scalar `v` in the new body; constants and scalar arith are re-emitted up front."""
    if v in args:
        return args[v]
    if v not in consts:
        op = v.owner
        name = p.fresh("cst")
        if op.name == "arith.constant":
            value = op.attributes["value"]
            if isinstance(value, ir.DenseElementsAttr) and value.is_splat:
                value = value.get_splat_value()
            line = f"arith.constant {value}"
        elif op.name == "tensor.extract":  # a scalar parameter: the kernel keeps its 0-d argument
            src = op.operands[0]
            line = f"tensor.extract {scalar_operand(p, src, args, consts)}[] : {src.type}"
        elif op.name in SCALAR_CASTS:
            src = op.operands[0]
            line = f"{op.name} {scalar_operand(p, src, args, consts)} : {src.type} to {op.results[0].type}"
        elif op.name in SCALAR_BINARY or op.name == "arith.negf":
            operands = ", ".join(scalar_operand(p, o, args, consts) for o in op.operands)
            line = f"{op.name} {operands} : {v.type}"
        else:
            raise ValueError(f"computes a vector operand with {op.name}, which lower-tiles cannot copy")
        p.prologue.append(f"{name} = {line}")
        consts[v] = name
    return consts[v]


def lower(kernel: ir.Operation, model: KernelModel, t: dict[str, int], plan: dict[str, int], align: int
          ) -> tuple[Program, list[tuple[str, str]]]:
    kind = t["kind"]
    p = Program()
    block = kernel.regions[0].blocks[0]
    args = {a: f"%arg{i}" for i, a in enumerate(block.arguments)}
    gm: dict[ir.Value, View] = {}
    ub: dict[ir.Value, View] = {}
    results = []
    temps = [b for b in model.buffers if b.role == "tmp"]
    slot = dict(zip((b.value for b in temps), slots_of(kernel, model)))
    counters = {"in": 0, "out": 0}
    for b in model.buffers:
        if b.role == "work":
            continue
        tt = _tensor(b.value)
        elt = str(tt.element_type)
        if b.role == "in":
            gm[b.value] = p.global_view(args[b.value], str(tt), list(tt.shape), elt, _shape(b, model, kind))
        elif b.role == "out":
            buf = View(p.fresh("out"), list(tt.shape), elt, "gm", contiguous_strides(list(tt.shape)))
            p.emit(f"{buf.name} = memref.alloc() : {buf.type}")
            results.append((p.value(f"bufferization.to_tensor {buf.name} restrict : {buf.type} to {tt}", "res"), str(tt)))
            gm[b.value] = p.reshape(buf, _shape(b, model, kind))
        label = f"{b.role}{counters[b.role]}" if b.role in counters else f"slot{slot[b.value]}"
        if b.role in counters:
            counters[b.role] += 1
        ub[b.value] = p.alloc(_local_shape(b, t, kind), elt, "ub", b.elem_bytes, b.depth, align, plan.get(label))
    # to_tensor results are read only after the loop writes them; keep them last.
    res_lines = [ln for ln in p.lines if "bufferization.to_tensor" in ln]
    p.lines = [ln for ln in p.lines if "bufferization.to_tensor" not in ln]

    unit = "elems" if kind == "elementwise" else "rows"
    bid = p.value('"ascend.block_idx"() : () -> index', "bid")
    bnum = p.value('"ascend.block_num"() : () -> index', "bnum")
    last = p.arith("subi", bnum, 1)
    is_last = p.value(f"arith.cmpi eq, {bid}, {last} : index", "last")
    blen = p.value(f"arith.select {is_last}, {p.index(t[f'last_block_{unit}'])}, {p.index(t[f'block_{unit}'])} : index", "blen")
    start = p.arith("muli", bid, t[f"block_{unit}"], "start")
    tile_size = t["tile_elems"] if kind == "elementwise" else t["tile_rows"]
    i = p.fresh("t")
    p.emit(f"scf.for {i} = {p.index(0)} to {blen} step {p.index(tile_size)} {{")
    rem = p.arith("subi", blen, i)
    n = p.arith("minsi", rem, tile_size, "n")
    off = p.arith("addi", start, i, "off")
    owner = {b.value: b for b in model.buffers if b.value is not None}
    local = {v: _tile(p, u, owner[v], t, kind, off, n, True) for v, u in ub.items()}
    for b in model.buffers:
        if b.role == "in":
            src = _tile(p, gm[b.value], b, t, kind, off, n, False)
            p.op("copy_in", [(src.name, vtype(src)), (local[b.value].name, vtype(local[b.value]))])
    p.sync("MTE2", "V")
    consts: dict[ir.Value, str] = {}
    for op in body_ops(kernel):
        if is_scalar_op(op):
            continue
        operands = tile_operands(p, op, local, args, consts)
        dst = local[op.results[0]]
        attrs = [f"{a} = {op.attributes[a]}" for a in KEPT_ATTRS if a in op.attributes]
        # On the [rows, cols] views a reduction or a row broadcast is along dim 1, a column broadcast dim 0.
        if op.name == "ascend.reduce":
            attrs.append("dims = array<i64: 1>")
        if op.name == "ascend.broadcast":
            attrs.append(f"dims = array<i64: {1 if owner[op.operands[0]].shape_class == 'row' else 0}>")
        p.op(VECTOR_TILE_OPS[op.name], operands + [(dst.name, vtype(dst))], ", ".join(attrs))
    p.sync("V", "MTE3")
    for b in model.buffers:
        if b.role == "out":
            dst = _tile(p, gm[b.value], b, t, kind, off, n, False)
            p.op("copy_out", [(local[b.value].name, vtype(local[b.value])), (dst.name, vtype(dst))])
    # The next tile's copy-in reuses the buffers this tile's copy-out still reads.
    p.sync("MTE3", "MTE2")
    p.emit("}")
    p.lines += res_lines
    return p, results

