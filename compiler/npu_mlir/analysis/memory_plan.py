"""Local-memory plan of a tiled kernel: which buffer lives where in each on-chip space.

Queued buffers (kernel inputs and outputs, double-buffered) each own their bytes. Temporaries
share slots: a temporary's live range runs from the op that defines it to its last use, and two
temporaries whose ranges are disjoint get the same slot (interval colouring, first fit in
definition order), so a long elementwise chain needs a few slots, not one buffer per op. Offsets
are 32-byte aligned in UB/L1 and 512-byte aligned in L0. `ascend-plan-memory` records the plan;
the AscendC emitter declares one TBuf per slot.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil

from torch_mlir import ir

from .kernel_model import Buffer, KernelModel, body_ops
from ..hardware.soc import Soc


@dataclass
class Placement:
    label: str  # "in0", "out0", "slot1", "work", "a1", ...
    space: str
    offset: int
    bytes: int  # all `depth` buffers together


def _live_ranges(kernel: ir.Operation, temps: list[Buffer]) -> list[tuple[int, int]]:
    ops = body_ops(kernel)
    index = {op: i for i, op in enumerate(ops)}
    ranges = []
    for b in temps:
        start = index[b.value.owner]
        end = max((index.get(use.owner, len(ops)) for use in b.value.uses), default=start)
        ranges.append((start, end))
    return ranges


def assign_slots(ranges: list[tuple[int, int]]) -> list[int]:
    """First-fit interval colouring: the slot of each range, in input order."""
    slot_end: list[int] = []
    slots = []
    for start, end in ranges:
        for s, busy_until in enumerate(slot_end):
            if busy_until < start:
                slot_end[s] = end
                slots.append(s)
                break
        else:
            slot_end.append(end)
            slots.append(len(slot_end) - 1)
    return slots


def slots_of(kernel: ir.Operation, model: KernelModel) -> list[int]:
    """The slot of each temporary of `model`, in the order of its buffer list."""
    temps = [b for b in model.buffers if b.role == "tmp"]
    return assign_slots(_live_ranges(kernel, temps))


def _elems(b: Buffer, tiling: dict[str, int]) -> int:
    if tiling["kind"] == "elementwise":
        return tiling["tile_elems"]
    cols = tiling.get("col_tile", tiling["cols_aligned"])  # a row split across UB tiles holds one tile
    if b.shape_class == "full":
        return tiling["tile_rows"] * cols
    if b.shape_class == "row":
        return ceil(tiling["tile_rows"] / tiling["align_elems"]) * tiling["align_elems"]
    return cols


def _place(items: list[tuple[str, str, int]], soc: Soc) -> list[Placement]:
    used: dict[str, int] = {}
    out = []
    for label, space, size in items:
        align = soc.alignment(space)
        size = ceil(size / align) * align
        out.append(Placement(label, space, used.get(space, 0), size))
        used[space] = used.get(space, 0) + size
    return out


def vector_plan(kernel: ir.Operation, model: KernelModel, tiling: dict[str, int], soc: Soc) -> list[Placement]:
    items = []
    counters = {"in": 0, "out": 0}
    for b in model.buffers:
        if b.role in counters:
            items.append((f"{b.role}{counters[b.role]}", "ub", _elems(b, tiling) * b.elem_bytes * b.depth))
            counters[b.role] += 1
    temps = [b for b in model.buffers if b.role == "tmp"]
    slot_bytes: dict[int, int] = {}
    for b, s in zip(temps, slots_of(kernel, model)):
        slot_bytes[s] = max(slot_bytes.get(s, 0), ceil(_elems(b, tiling) * b.elem_bytes / soc.ub_align) * soc.ub_align)
    items += [(f"slot{s}", "ub", size) for s, size in sorted(slot_bytes.items())]
    items += [("work", "ub", _elems(b, tiling) * b.elem_bytes) for b in model.buffers if b.role == "work"]
    return _place(items, soc)


def cube_plan(model: KernelModel, tiling: dict[str, int], soc: Soc) -> list[Placement]:
    eb = ir.RankedTensorType(model.cube_op.operands[0].type).element_type
    eb = max(1, (8 if isinstance(eb, ir.IndexType) else eb.width) // 8)
    bm, bn, bk = tiling["base_m"], tiling["base_n"], tiling["base_k"]
    k16 = ceil(bk / 16) * 16
    depth = tiling["buffer_num"]
    items = [("a1", "l1", bm * k16 * eb * depth), ("b1", "l1", k16 * bn * eb * depth),
             ("a2", "l0a", bm * k16 * eb * depth), ("b2", "l0b", k16 * bn * eb * depth),
             ("c1", "l0c", bm * bn * 4)]
    if "epilogue_ub_bytes" in tiling:
        items.append(("epilogue", "ub", tiling["epilogue_ub_bytes"]))
    return _place(items, soc)


def overflow(plan: list[Placement], soc: Soc) -> str | None:
    """A message naming the first space the plan overflows, or None when everything fits."""
    used: dict[str, int] = {}
    for p in plan:
        used[p.space] = max(used.get(p.space, 0), p.offset + p.bytes)
    for space, size in used.items():
        if size > soc.capacity(space):
            labels = ", ".join(f"{p.label} {p.bytes} B" for p in plan if p.space == space)
            return f"needs {size} bytes of {space.upper()} ({labels}) but the core has {soc.capacity(space)}"
    return None
