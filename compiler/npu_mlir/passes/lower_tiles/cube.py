"""Tile-level program of a cube kernel (tiling kind matmul), with its vector epilogue if any.

Output tiles (base_m x base_n) are dealt round-robin: block b runs tiles b, b + block_num, ...
For each tile, K steps copy A and B tiles GM -> L1 (MTE2), load them into L0A / L0B (MTE1,
transposing when the matmul says so) and accumulate in L0C (M); the first K step is peeled
because it initialises the accumulator (`mmad {init}` is static). Fixpipe then writes the tile
to GM, or to UB when elementwise ops follow (mix kernels), where they run on [m, n] tiles
before copy_out. Batches are folded into rows: A is viewed as [batch*m, k], B as [batch*k, n].
"""

from __future__ import annotations

from math import ceil

from torch_mlir import ir

from ...dialects.ascend import tensor_format
from ...analysis.kernel_model import KernelModel, cube_sources, elem_bytes, epilogue_ops
from ...hardware.soc import Soc
from .program import Program, Size, View, contiguous_strides, vtype
from .vector import KEPT_ATTRS, VECTOR_TILE_OPS, scalar_operand


def _flag(op: ir.Operation, name: str) -> bool:
    return name in op.attributes and bool(ir.BoolAttr(op.attributes[name]).value)


def _k_step(p: Program, g: dict, kt: Size, init: bool, t: dict[str, int], ta: bool, tb: bool) -> None:
    k0 = p.arith("muli", kt, t["base_k"], "k0")
    klen = p.arith("minsi", p.arith("subi", t["k"], k0), t["base_k"], "klen")
    a_rows = p.arith("addi", g["a_base"], k0) if ta else g["row0"]
    a_src = p.subview(g["a"], [a_rows, g["m0"]] if ta else [a_rows, k0], [klen, g["mlen"]] if ta else [g["mlen"], klen])
    b_rows = p.arith("addi", g["b_base"], g["n0"] if tb else k0)
    b_src = p.subview(g["b"], [b_rows, k0] if tb else [b_rows, g["n0"]], [g["nlen"], klen] if tb else [klen, g["nlen"]])
    a1 = p.subview(g["a1"], [0, 0], [klen, g["mlen"]] if ta else [g["mlen"], klen])
    b1 = p.subview(g["b1"], [0, 0], [g["nlen"], klen] if tb else [klen, g["nlen"]])
    p.op("copy_in", [(a_src.name, vtype(a_src)), (a1.name, vtype(a1))])
    p.op("copy_in", [(b_src.name, vtype(b_src)), (b1.name, vtype(b1))])
    p.sync("MTE2", "MTE1")
    a0 = p.subview(g["a0"], [0, 0], [g["mlen"], klen])
    b0 = p.subview(g["b0"], [0, 0], [klen, g["nlen"]])
    # `transpose` is logical (the operand is stored transposed), not LoadData's ifTranspose: L0B's
    # nZ layout makes the hardware flag the opposite for B (targets/ascendc/cube.py, cpu_twin/twin/cube.h).
    p.op("load_l0", [(a1.name, vtype(a1)), (a0.name, vtype(a0))], f"transpose = {int(ta)} : i64")
    p.op("load_l0", [(b1.name, vtype(b1)), (b0.name, vtype(b0))], f"transpose = {int(tb)} : i64")
    p.sync("MTE1", "M")
    c0 = g["c0v"]
    p.op("mmad", [(a0.name, vtype(a0)), (b0.name, vtype(b0)), (c0.name, vtype(c0))], f"init = {int(init)} : i64")
    # The next K step overwrites L1 / L0 operands the cube may still read.
    p.sync("M", "MTE2")


def _global(p: Program, arg: str, v: ir.Value, view_shape: list[int]) -> View:
    tt = ir.RankedTensorType(v.type)
    return p.global_view(arg, str(tt), list(tt.shape), str(tt.element_type), view_shape)


def lower(kernel: ir.Operation, model: KernelModel, t: dict[str, int], plan: dict[str, int], soc: Soc
          ) -> tuple[Program, list[tuple[str, str]]]:
    op = model.cube_op
    ta, tb = _flag(op, "transpose_a"), _flag(op, "transpose_b")
    a, b = cube_sources(op)  # an ND operand cast to NZ in the kernel: the copy-in converts it
    for v in (a, b):
        if tensor_format(v.type) != "ND":
            raise ValueError(f"reads a {tensor_format(v.type)} cube operand; lower-tiles copies ND tiles only")
    if len(op.operands) > 2:
        raise ValueError("has a matmul bias operand; lower-tiles expects it as an explicit broadcast + add")
    epilogue = epilogue_ops(kernel)
    batch, m, n, k = t["batch"], t["m"], t["n"], t["k"]
    if epilogue and batch > 1:
        raise ValueError("has an epilogue on a batched matmul, which lower-tiles does not tile")
    block = kernel.regions[0].blocks[0]
    args = {arg: f"%arg{i}" for i, arg in enumerate(block.arguments)}
    p = Program()
    elt = str(ir.RankedTensorType(a.type).element_type)
    eb = elem_bytes(a.type)
    bm, bn, bk = t["base_m"], t["base_n"], t["base_k"]
    g: dict = {"a": _global(p, args[a], a, [batch * k, m] if ta else [batch * m, k]),
               "b": _global(p, args[b], b, [batch * n, k] if tb else [batch * k, n])}
    yielded = list(list(block.operations)[-1].operands)
    out_views, out_bufs, results = {}, [], []
    for v in yielded:
        tt = ir.RankedTensorType(v.type)
        buf = View(p.fresh("out"), list(tt.shape), str(tt.element_type), "gm", contiguous_strides(list(tt.shape)))
        p.emit(f"{buf.name} = memref.alloc() : {buf.type}")
        results.append((f"%res_{buf.name[1:]}", str(tt)))
        out_bufs.append(buf)
        out_views[v] = p.reshape(buf, [batch * m, n])
    g["a1"] = p.alloc([bk, bm] if ta else [bm, bk], elt, "l1", eb, t["buffer_num"], soc.l1_align, plan.get("a1"))
    g["b1"] = p.alloc([bn, bk] if tb else [bk, bn], elt, "l1", eb, t["buffer_num"], soc.l1_align, plan.get("b1"))
    g["a0"] = p.alloc([bm, bk], elt, "l0a", eb, t["buffer_num"], soc.l0_align, plan.get("a2"))
    g["b0"] = p.alloc([bk, bn], elt, "l0b", eb, t["buffer_num"], soc.l0_align, plan.get("b2"))
    c0 = p.alloc([bm, bn], "f32", "l0c", 4, 1, soc.l0_align, plan.get("c1"))
    ub: dict[ir.Value, View] = {}
    if epilogue:
        for v in [op.results[0]] + [r for o in epilogue for r in o.results]:
            tt = ir.RankedTensorType(v.type)
            ub[v] = p.alloc([bm, bn] if list(tt.shape) == [m, n] else [ceil(bn / 8) * 8], str(tt.element_type), "ub",
                            elem_bytes(tt), 1, soc.ub_align)
        for v in block.arguments:
            if v not in (a, b) and isinstance(v.type, ir.RankedTensorType):
                tt = ir.RankedTensorType(v.type)
                g[v] = _global(p, args[v], v, list(tt.shape))
                ub[v] = p.alloc([bm, bn] if list(tt.shape) == [m, n] else [ceil(bn / 8) * 8], str(tt.element_type),
                                "ub", elem_bytes(tt), 2, soc.ub_align)
    per_batch = t["tiles_m"] * t["tiles_n"]
    bid = p.value('"ascend.block_idx"() : () -> index', "bid")
    bnum = p.value('"ascend.block_num"() : () -> index', "bnum")
    tile = p.fresh("tile")
    p.emit(f"scf.for {tile} = {bid} to {p.index(batch * per_batch)} step {bnum} {{")
    bt = p.arith("divui", tile, per_batch, "bt")
    rest = p.arith("remui", tile, per_batch)
    tm, tn = p.arith("divui", rest, t["tiles_n"], "tm"), p.arith("remui", rest, t["tiles_n"], "tn")
    g["m0"] = p.arith("muli", tm, bm, "m0")
    g["n0"] = p.arith("muli", tn, bn, "n0")
    g["mlen"] = p.arith("minsi", p.arith("subi", m, g["m0"]), bm, "mlen")
    g["nlen"] = p.arith("minsi", p.arith("subi", n, g["n0"]), bn, "nlen")
    g["row0"] = p.arith("addi", p.arith("muli", bt, m), g["m0"], "row0")
    g["a_base"] = p.arith("muli", bt, k)
    g["b_base"] = p.arith("muli", bt, n if tb else k)
    g["c0v"] = p.subview(c0, [0, 0], [g["mlen"], g["nlen"]])
    _k_step(p, g, 0, True, t, ta, tb)
    if t["k_tiles"] > 1:
        kt = p.fresh("kt")
        p.emit(f"scf.for {kt} = {p.index(1)} to {p.index(t['k_tiles'])} step {p.index(1)} {{")
        _k_step(p, g, kt, False, t, ta, tb)
        p.emit("}")
    p.sync("M", "FIX")
    cv = g["c0v"]
    if not ub:
        dst = p.subview(out_views[op.results[0]], [g["row0"], g["n0"]], [g["mlen"], g["nlen"]])
        p.op("fixpipe", [(cv.name, vtype(cv)), (dst.name, vtype(dst))])
    else:
        _epilogue(p, g, op, epilogue, ub, out_views, args)
    # The next output tile reuses L0C (and UB) that fixpipe / copy_out may still read.
    p.sync("FIX", "M")
    p.emit("}")
    for (name, ttype), buf in zip(results, out_bufs):
        p.emit(f"{name} = bufferization.to_tensor {buf.name} restrict : {buf.type} to {ttype}")
    return p, results


def _epilogue(p: Program, g: dict, op: ir.Operation, epilogue: list[ir.Operation], ub: dict, out_views: dict,
              args: dict) -> None:
    def tile(v: ir.Value) -> View:
        view = ub[v]
        return p.subview(view, [0, 0], [g["mlen"], g["nlen"]]) if len(view.shape) == 2 else p.subview(view, [0], [g["nlen"]])

    local = {v: tile(v) for v in ub}
    acc = local[op.results[0]]
    p.op("fixpipe", [(g["c0v"].name, vtype(g["c0v"])), (acc.name, vtype(acc))])
    for v, view in local.items():
        if v in g:  # an epilogue input: its [m, n] tile or its [n] slice
            gv = g[v]
            src = (p.subview(gv, [g["row0"], g["n0"]], [g["mlen"], g["nlen"]]) if len(gv.shape) == 2
                   else p.subview(gv, [g["n0"]], [g["nlen"]]))
            p.op("copy_in", [(src.name, vtype(src)), (view.name, vtype(view))])
    p.sync("MTE2", "V")
    p.sync("FIX", "V")
    consts: dict = {}
    for o in epilogue:
        operands = []
        for v in o.operands:
            if isinstance(v.type, ir.RankedTensorType):
                operands.append((local[v].name, vtype(local[v])))
            else:
                operands.append((scalar_operand(p, v, args, consts), str(v.type)))
        dst = local[o.results[0]]
        attrs = [f"{a} = {o.attributes[a]}" for a in KEPT_ATTRS if a in o.attributes]
        if o.name == "ascend.broadcast":
            attrs.append("dims = array<i64: 0>")
        elif o.name not in VECTOR_TILE_OPS or o.name == "ascend.reduce":
            raise ValueError(f"has {o.name} in a matmul epilogue, which lower-tiles does not tile")
        p.op(VECTOR_TILE_OPS[o.name], operands + [(dst.name, vtype(dst))], ", ".join(attrs))
    p.sync("V", "MTE3")
    for v, view in out_views.items():
        dst = p.subview(view, [g["row0"], g["n0"]], [g["mlen"], g["nlen"]])
        p.op("copy_out", [(local[v].name, vtype(local[v])), (dst.name, vtype(dst))])
    p.sync("MTE3", "MTE2")
