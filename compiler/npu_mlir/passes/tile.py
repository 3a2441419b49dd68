"""ascend-tile: split each `ascend.kernel` over cores and into local-memory tiles.

Vector (aiv) kernels spread over the 48 vector cores, cube (aic / mix) kernels over the 24 cube
cores, never with more blocks than there is work. Vector tiles are sized so that every live UB
buffer of the kernel (analysis/kernel_model.py: inputs and outputs double-buffered,
temporaries once per liveness slot, as memory_plan.py places them) fits the 192 KiB UB at
32-byte alignment; cube tiles respect L0A 64 KiB, L0B
64 KiB and L0C 128 KiB with double-buffered operands, in whole fractals (16x16 fp16/bf16, 16x8
fp32, 16x32 int8). The result goes on the kernel as `block_dim` and the `tiling` dictionary
(all integers i64, except the strings `kind` and `reason`), read by plan-memory, lower-tiles,
the emitters and the sim (which takes block_dim):

  every kind   kind (string: elementwise | row | matmul | opaque), block_dim, buffer_num (queue
               depth: 2 = double buffering)
  elementwise  total       elements of the iteration space (the kernel's tensors flattened)
               block_elems elements per block (a multiple of align_elems); the last block gets
               last_block_elems = total - (block_dim - 1) * block_elems
               tile_elems  elements per UB tile; tile_num / tail_tile_elems: tiles of a full block
               and the size of its last tile; last_tile_num / last_tail_tile_elems: same for the
               last block
               align_elems elements in 32 bytes of the narrowest dtype
  row          rows, cols  the iteration space as [rows, cols] (cols = the reduced / broadcast
               trailing dims); cols_aligned = cols padded to align_elems (UB row pitch)
               block_rows, last_block_rows, tile_rows, tile_num, tail_tile_rows, last_tile_num,
               last_tail_tile_rows, align_elems: as for elementwise, counted in rows
               only when one row does not fit UB (a two-level reduction, tile_rows 1):
               col_tile columns per UB tile (a multiple of align_elems), col_tiles tiles per row,
               tail_col_tile the last tile's columns
  matmul       batch, m, n, k (transposes already applied: C[m,n] = A[m,k] B[k,n])
               base_m, base_n, base_k  the L0 tile: L0A holds base_m x base_k, L0B base_k x
               base_n, L0C base_m x base_n (fp32), all multiples of the fractal
               tiles_m, tiles_n, k_tiles  tile counts; tail_m, tail_n, tail_k the last tiles' sizes
               tiles = batch * tiles_m * tiles_n output tiles, dealt round-robin: block b takes
               tiles b, b + block_dim, ...; tile t is (batch t // (tiles_m*tiles_n), then row-major
               over (tiles_m, tiles_n))
               with a vector epilogue (mix kernels): epilogue_rows rows of an output tile at a
               time, each at epilogue_pitch elements in UB; epilogue_ub_bytes in all
  opaque       block_dim 1; `reason` (string) says why the kernel has no tiling

A kernel whose smallest tile still does not fit is an error at the kernel's location.
"""

from __future__ import annotations

from math import ceil

from torch_mlir import ir

from ..dialects.ascend import load_ascend, module_soc
from ..analysis.kernel_model import (
    CUBE_OPS, Buffer, KernelModel, analyze, body_ops, elem_bytes, epilogue_values, is_scalar_op,
)
from ..analysis.memory_plan import slots_of
from ..errors import MEMORY, CompilerError
from ..hardware.soc import Soc

BUFFER_NUM = 2
# Below this much work per block the launch costs more than the split saves.
MIN_BLOCK_BYTES = 2048


class TilingError(CompilerError, ValueError):
    """The kernel cannot be tiled to fit the target; the message says what does not fit."""

    code = MEMORY


def _align_elems(model: KernelModel, soc: Soc) -> int:
    return max(1, soc.ub_align // min(b.elem_bytes for b in model.buffers))


def _split(work: int, unit: int, cores: int, min_units: int) -> tuple[int, int]:
    """Blocks and work per block (a multiple of `unit`) for `work` items over `cores`."""
    units = ceil(work / unit)
    blocks = max(1, min(cores, units // max(1, min_units)))
    per_block = ceil(units / blocks) * unit
    return ceil(work / per_block), per_block


def _tiles(work: int, tile: int) -> tuple[int, int]:
    num = ceil(work / tile)
    return num, work - (num - 1) * tile


def _shared_temps(kernel: ir.Operation, model: KernelModel) -> list[Buffer]:
    """Queued buffers as they are, temporaries merged per liveness slot (as plan-memory places them)."""
    temps = [b for b in model.buffers if b.role == "tmp"]
    # A slot is as large as its largest buffer: a full tile beats a column, a column beats a row
    # value, then the wider dtype (plan-memory sizes the slot by the max, so must the tiling).
    rank = {"full": 2, "col": 1, "row": 0}
    size = lambda b: (rank.get(b.shape_class, 2), b.elem_bytes)
    widest: dict[int, Buffer] = {}
    for b, slot in zip(temps, slots_of(kernel, model)):
        if slot not in widest or size(b) > size(widest[slot]):
            widest[slot] = b
    return [b for b in model.buffers if b.role != "tmp"] + list(widest.values())


def plan_elementwise(model: KernelModel, soc: Soc) -> dict[str, int]:
    align = _align_elems(model, soc)
    per_elem = sum(b.elem_bytes * b.depth for b in model.buffers)
    cap = soc.ub_bytes // per_elem // align * align
    if cap < align:
        raise TilingError(f"{len(model.buffers)} live UB buffers need {per_elem * align} bytes for one "
                          f"{align}-element tile; UB has {soc.ub_bytes}")
    total = model.cols
    widest = max(b.elem_bytes for b in model.buffers)
    blocks, block_elems = _split(total, align, soc.cores("aiv"), ceil(MIN_BLOCK_BYTES / widest / align))
    tile = min(cap, block_elems)
    last = total - (blocks - 1) * block_elems
    tile_num, tail = _tiles(block_elems, tile)
    last_num, last_tail = _tiles(last, tile)
    return dict(total=total, block_dim=blocks, block_elems=block_elems, last_block_elems=last,
                tile_elems=tile, tile_num=tile_num, tail_tile_elems=tail, last_tile_num=last_num,
                last_tail_tile_elems=last_tail, align_elems=align)


def plan_rows(model: KernelModel, soc: Soc) -> dict[str, int]:
    align = _align_elems(model, soc)
    cols_aligned = ceil(model.cols / align) * align
    per_row = fixed = 0
    for b in model.buffers:
        if b.shape_class == "full":
            per_row += cols_aligned * b.elem_bytes * b.depth
        elif b.shape_class == "row":
            per_row += b.elem_bytes * b.depth
            fixed += soc.ub_align * b.depth  # the row buffer's padding to 32 bytes
        else:
            fixed += cols_aligned * b.elem_bytes * b.depth
    cap = (soc.ub_bytes - fixed) // per_row if soc.ub_bytes > fixed else 0
    split = {} if cap >= 1 else _split_row(model, soc, align)
    row_bytes = model.cols * max(b.elem_bytes for b in model.buffers)
    blocks, block_rows = _split(model.rows, 1, soc.cores("aiv"), ceil(MIN_BLOCK_BYTES / row_bytes))
    tile = min(max(cap, 1), block_rows)
    last = model.rows - (blocks - 1) * block_rows
    tile_num, tail = _tiles(block_rows, tile)
    last_num, last_tail = _tiles(last, tile)
    return dict(rows=model.rows, cols=model.cols, cols_aligned=cols_aligned, block_dim=blocks,
                block_rows=block_rows, last_block_rows=last, tile_rows=tile, tile_num=tile_num,
                tail_tile_rows=tail, last_tile_num=last_num, last_tail_tile_rows=last_tail,
                align_elems=align, **split)


def _split_row(model: KernelModel, soc: Soc, align: int) -> dict[str, int]:
    """A row too long for UB is split across UB tiles of `col_tile` columns, one row at a time:
    a two-level reduction (each tile reduces its columns, the row's accumulator folds the tiles'
    partial results in order); values computed from the finished reduction take a second pass over
    the same column tiles. Row buffers (the accumulators) stay whole; full and column buffers hold
    one column tile."""
    per_col = fixed = 0
    for b in model.buffers:
        if b.shape_class == "row":
            fixed += soc.ub_align * b.depth
        else:
            per_col += b.elem_bytes * b.depth
    col_tile = (soc.ub_bytes - fixed) // per_col // align * align if soc.ub_bytes > fixed else 0
    if col_tile < align:
        raise TilingError(f"{len(model.buffers)} UB buffers need {per_col * align + fixed} bytes for one "
                          f"{align}-column tile of a row; UB has {soc.ub_bytes}")
    col_tiles, tail = _tiles(model.cols, col_tile)
    return dict(col_tile=col_tile, col_tiles=col_tiles, tail_col_tile=tail)


def _round(x: int, m: int) -> int:
    return ceil(x / m) * m


def plan_epilogue(kernel: ir.Operation, model: KernelModel, base_m: int, base_n: int, soc: Soc) -> dict[str, int]:
    """Rows of an output tile the vector epilogue handles at once, so all its UB buffers fit."""
    values = epilogue_values(kernel, model)
    if isinstance(values, str):
        raise TilingError(values)
    align = max(1, soc.ub_align // min(elem_bytes(v.type) for v, _ in values))
    pitch = _round(base_n, align)
    per_row = sum(pitch * elem_bytes(v.type) for v, cls in values if cls == "full")
    fixed = sum(pitch * elem_bytes(v.type) for v, cls in values if cls == "col")
    rows = min(base_m, (soc.ub_bytes - fixed) // per_row) if soc.ub_bytes > fixed else 0
    if rows < 1:
        raise TilingError(f"the epilogue's {len(values)} UB buffers need {per_row + fixed} bytes for one row")
    return dict(epilogue_rows=rows, epilogue_pitch=pitch, epilogue_ub_bytes=rows * per_row + fixed)


def plan_matmul(kernel: ir.Operation, model: KernelModel, core_type: str, soc: Soc) -> dict[str, int]:
    op = model.cube_op
    a, b = (ir.RankedTensorType(v.type) for v in op.operands[:2])
    ta = "transpose_a" in op.attributes and bool(ir.BoolAttr(op.attributes["transpose_a"]).value)
    a_shape = list(a.shape)
    batch = 1
    for d in a_shape[:-2]:
        batch *= d
    m, k = (a_shape[-1], a_shape[-2]) if ta else (a_shape[-2], a_shape[-1])
    n = model.iter_shape[-1]
    eb = elem_bytes(a)
    frac_rows, frac_cols = soc.fractal_shape(eb * 8)
    k_unit = max(16, frac_cols)  # k must be whole fractals of both A (columns) and B (rows)
    # Operands double-buffered in L0A/L0B, the accumulator single in L0C.
    base_k = max(k_unit, (soc.l0a_bytes // BUFFER_NUM) // (128 * eb) // k_unit * k_unit)
    base_m, base_n = 128, 128
    base_m, base_n, base_k = min(base_m, _round(m, 16)), min(base_n, _round(n, 16)), min(base_k, _round(k, k_unit))
    cores = soc.cores(core_type)
    # Smaller output tiles until every core has one, down to 32x32 (smaller tiles starve the cube).
    while batch * ceil(m / base_m) * ceil(n / base_n) < cores and max(base_m, base_n) > 32:
        if base_m >= base_n:
            base_m = _round(base_m // 2, 16)
        else:
            base_n = _round(base_n // 2, 16)
    l0a, l0b, l0c = base_m * base_k * eb * BUFFER_NUM, base_k * base_n * eb * BUFFER_NUM, base_m * base_n * 4
    for space, need, have in (("L0A", l0a, soc.l0a_bytes), ("L0B", l0b, soc.l0b_bytes), ("L0C", l0c, soc.l0c_bytes)):
        if need > have:
            raise TilingError(f"{space} tile needs {need} bytes; {space} has {have}")
    tiles_m, tiles_n, k_tiles = ceil(m / base_m), ceil(n / base_n), ceil(k / base_k)
    plan = dict(batch=batch, m=m, n=n, k=k, base_m=base_m, base_n=base_n, base_k=base_k,
                tiles_m=tiles_m, tiles_n=tiles_n, k_tiles=k_tiles, tail_m=m - (tiles_m - 1) * base_m,
                tail_n=n - (tiles_n - 1) * base_n, tail_k=k - (k_tiles - 1) * base_k,
                block_dim=min(cores, batch * tiles_m * tiles_n))
    if any(op.name not in CUBE_OPS and not is_scalar_op(op) for op in body_ops(kernel)):
        plan.update(plan_epilogue(kernel, model, base_m, base_n, soc))
    return plan


def _attr(v: int | str) -> ir.Attribute:
    if isinstance(v, str):
        return ir.StringAttr.get(v)
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)


def tiling_of(kernel: ir.Operation, soc: Soc) -> dict[str, int | str]:
    """The tiling record of `kernel` as a Python dict (raises TilingError when it cannot fit)."""
    model = analyze(kernel)
    if model.kind in ("elementwise", "row"):
        model.buffers = _shared_temps(kernel, model)
    core_type = ir.StringAttr(kernel.attributes["core_type"]).value
    if model.kind == "elementwise":
        plan = plan_elementwise(model, soc)
    elif model.kind == "row":
        plan = plan_rows(model, soc)
    elif model.kind == "matmul":
        plan = plan_matmul(kernel, model, core_type, soc)
    else:
        plan = dict(block_dim=1, reason=model.reason)
    return dict(kind=model.kind, buffer_num=BUFFER_NUM, **plan)


def run(module: ir.Operation) -> bool:
    load_ascend(module.context)
    soc = module_soc(module)
    ok = True
    for op in (o.operation for o in module.regions[0].blocks[0].operations):
        if op.name != "ascend.kernel":
            continue
        try:
            record = tiling_of(op, soc)
        except TilingError as exc:
            name = ir.StringAttr(op.attributes["sym_name"]).value
            op.location.emit_error(f"ERR03006 GRAPH kernel @{name} cannot be tiled for {soc.name}: {exc.detail}")
            ok = False
            continue
        op.attributes["block_dim"] = _attr(record["block_dim"])
        op.attributes["tiling"] = ir.DictAttr.get({k: _attr(v) for k, v in record.items()})
    return ok
