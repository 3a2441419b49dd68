"""ascend-plan-memory: place each tiled kernel's on-chip buffers and check they fit.

Runs after ascend-tile (it needs the tiling record). Queued inputs and outputs own their bytes;
temporaries share slots by liveness (analysis/memory_plan.py), so a long chain of
elementwise ops costs a few UB buffers, not one per op. The plan goes on the kernel as
    memory_plan = {<space> = {<buffer> = array<i64: offset, bytes>, ...}, ...}
(offsets and sizes in bytes, all `depth` buffers of a queue together), which the AscendC emitter
mirrors with one TQue per queue and one TBuf per slot. A kernel that does not fit any space is
an error at the kernel's location naming the space, its buffers and the capacity: that happens
when the tiling was forced (or hand-written) beyond what ascend-tile would choose.
"""

from __future__ import annotations

from torch_mlir import ir

from ..dialects.ascend import load_ascend, module_soc
from ..analysis.kernel_model import analyze
from ..analysis.memory_plan import Placement, cube_plan, overflow, vector_plan


def _record(kernel: ir.Operation) -> dict[str, int | str]:
    out: dict[str, int | str] = {}
    for named in ir.DictAttr(kernel.attributes["tiling"]):
        a = named.attr
        out[named.name] = ir.StringAttr(a).value if isinstance(a, ir.StringAttr) else ir.IntegerAttr(a).value
    return out


def _as_attr(plan: list[Placement]) -> ir.DictAttr:
    spaces: dict[str, dict[str, ir.Attribute]] = {}
    for p in plan:
        spaces.setdefault(p.space, {})[p.label] = ir.DenseI64ArrayAttr.get([p.offset, p.bytes])
    return ir.DictAttr.get({s: ir.DictAttr.get(v) for s, v in spaces.items()})


def run(module: ir.Operation) -> bool:
    load_ascend(module.context)
    soc = module_soc(module)
    ok = True
    for kernel in (o.operation for o in module.regions[0].blocks[0].operations):
        if kernel.name != "ascend.kernel":
            continue
        name = ir.StringAttr(kernel.attributes["sym_name"]).value
        tiling = _record(kernel)
        if "kind" not in tiling:
            kernel.location.emit_error(f"ERR03003 GRAPH kernel @{name} has no tiling record; run ascend-tile first")
            ok = False
            continue
        model = analyze(kernel)
        if tiling["kind"] != model.kind:
            kernel.location.emit_error(f"ERR03003 GRAPH kernel @{name} has a '{tiling['kind']}' tiling record "
                                       f"but its body is a '{model.kind}' kernel; rerun ascend-tile")
            ok = False
            continue
        if model.kind in ("elementwise", "row"):
            plan = vector_plan(kernel, model, tiling, soc)
        elif model.kind == "matmul":
            plan = cube_plan(model, tiling, soc)
        else:
            plan = []
        if err := overflow(plan, soc):
            kernel.location.emit_error(f"ERR03006 GRAPH kernel @{name} does not fit {soc.name}: {err}; "
                                       "use a smaller tile (rerun ascend-tile) or split the kernel")
            ok = False
            continue
        kernel.attributes["memory_plan"] = _as_attr(plan)
    return ok
