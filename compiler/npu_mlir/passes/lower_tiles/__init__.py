"""ascend-lower-tiles: rewrite each tiled kernel body into its per-core tile-level program.

After ascend-tile (and, optionally, ascend-plan-memory, whose offsets then go on the allocs),
the tensor ops of a kernel become what one core runs: `ascend.block_idx` picks this block's
share, `ascend.alloc` reserves the UB / L1 / L0 buffers (depth 2 = double buffering), an scf.for
walks the tiles (the last one a tail of the leftover size) with `copy_in` -> vector ops or
`load_l0` / `mmad` / `fixpipe` -> `copy_out`, and set_flag/wait_flag order the pipes (MTE2 ->
V -> MTE3, MTE2 -> MTE1 -> M -> FIX). The kernel keeps its tensor signature (arguments are read
through bufferization.to_buffer, results are allocated and returned with to_tensor), so launches
and the host code stay valid. A row split across UB tiles (col_tiles) becomes a two-level
reduction (split_rows.py) when analysis/split_rows.py covers it. Opaque kernels (no tiling) are left
as they are.
"""

from __future__ import annotations

from torch_mlir import ir

from ...dialects.ascend import load_ascend, module_soc, tensor_format
from . import cube, split_rows, vector
from ...analysis.kernel_model import analyze, cube_sources
from .program import kernel_text


def _dict(attr: ir.Attribute) -> dict[str, object]:
    out: dict[str, object] = {}
    for named in ir.DictAttr(attr):
        a = named.attr
        if isinstance(a, ir.StringAttr):
            out[named.name] = a.value
        elif isinstance(a, ir.IntegerAttr):
            out[named.name] = a.value
        elif isinstance(a, ir.DictAttr):
            out[named.name] = _dict(a)
        else:
            out[named.name] = list(ir.DenseI64ArrayAttr(a))
    return out


def _offsets(kernel: ir.Operation) -> dict[str, int]:
    """Buffer label -> byte offset from ascend-plan-memory's plan (empty without one)."""
    if "memory_plan" not in kernel.attributes:
        return {}
    plan = _dict(kernel.attributes["memory_plan"])
    return {label: where[0] for space in plan.values() for label, where in space.items()}


def lower_kernel(kernel: ir.Operation, soc) -> str | None:
    """The lowered kernel's text, None for a kernel left alone; raises ValueError on bad input."""
    tiling = _dict(kernel.attributes["tiling"])
    if "kind" not in tiling:
        raise ValueError("has no tiling record; run ascend-tile first")
    model = analyze(kernel)
    if tiling["kind"] != model.kind:
        raise ValueError(f"has a '{tiling['kind']}' tiling record for a '{model.kind}' body; rerun ascend-tile")
    if any(ir.RankedTensorType(a.type).rank == 0 and any(u.owner.name.startswith("ascend.") for u in a.uses)
           for a in kernel.regions[0].blocks[0].arguments if isinstance(a.type, ir.RankedTensorType)):
        return None  # a 0-d argument an ascend op reads as a tensor has no tile-level copy yet
    if model.kind == "matmul" and any(tensor_format(v.type) != "ND" for v in cube_sources(model.cube_op)):
        return None  # an operand stored in NZ (read as is by the AscendC copy-in) has no tile-level copy yet
    if "col_tiles" in tiling:  # a row split across UB tiles: a two-level reduction
        lowered = split_rows.lower(kernel, model, tiling, soc.ub_align)
        if lowered is None:
            return None  # outside analysis/split_rows.py's cover: no tile-level form yet
        program, results = lowered
    elif model.kind in ("elementwise", "row"):
        program, results = vector.lower(kernel, model, tiling, _offsets(kernel), soc.ub_align)
    elif model.kind == "matmul":
        program, results = cube.lower(kernel, model, tiling, _offsets(kernel), soc)
    else:
        return None
    return kernel_text(kernel, program, results)


def run(module: ir.Operation) -> bool:
    load_ascend(module.context)
    soc = module_soc(module)
    ok = True
    for kernel in [o.operation for o in module.regions[0].blocks[0].operations]:
        if kernel.name != "ascend.kernel":
            continue
        name = ir.StringAttr(kernel.attributes["sym_name"]).value
        try:
            text = lower_kernel(kernel, soc)
        except ValueError as exc:
            kernel.location.emit_error(f"ERR03003 GRAPH kernel @{name} {exc}")
            ok = False
            continue
        if text is None:
            continue
        lowered = ir.Module.parse(text)
        lowered.body.operations[0].operation.move_before(kernel)
        kernel.erase()
    return ok
