"""The Ascend compiler pipeline, end to end, in one place.

torch dialect --(1 torch_backend)--> linalg on tensors --(2 fuse_linalg)--> fused linalg
  --(3 attach_target)--> + #ascend.target --(4 raise_to_ascend)--> ascend tensor ops
  --(5 assign_formats)--> NZ / NC1HWC0 / FRACTAL_Z operands --(6 outline_kernels)--> ascend.kernel
  + ascend.launch --(7 tile_kernels)--> tiling records --(8 plan_memory)--> buffer offsets
  --> emitters, each reading the same tiled kernel: the sim target (targets/sim: the .so the
  runtime launches, block_dim from the tiling record), AscendC and ACL (targets/ascendc).
Stage 5 reads an operand already stored in NZ as it is and casts the other cube operands; stage 6
puts each ND -> NZ cast of a matmul operand into the matmul's kernel, whose copy-in converts it
(AscendC's DataCopy with Nd2NzParams), and likewise conv's NC1HWC0 input / FRACTAL_Z weight casts
and the cast of its NC1HWC0 result back to ND into the conv kernel, so formats add no kernel.
Stage 6 outlines every computation: ascend ops into fused kernels, and the upstream ops raising
leaves alone (gathers, value+index reductions, tensor.concat / pad / extract_slice, pooling) into
`opaque` kernels whose body keeps them (the sim builds them; their AscendC runs on the scalar
unit, targets/ascendc/scalar.py). Stage 7 first verifies that the host function computes
nothing (ascend-verify-host): every op left outside a kernel is an error, never a silent host
computation.

Every compile runs this whole pipeline: an eager miss (frontend/kernel_build.py) and a
torch.compile graph (frontend/fx_graph.py) run stages 2-8 (stage 1 ran as the graph was imported,
frontend/torch_import.py), then targets/launch_list.py builds each
tiled kernel in both forms and turns the host function into the record's launch list; npu-opt
runs the same passes by name. A call the pipeline refuses runs on the CPU fallback with the
refusal as its reason (eager_stats() counts it): no kernel is built around the pipeline
(TORCH_NPU_EAGER_PIPELINE=0, building from linalg, exists only as bench_pipeline's peer).

`ascend-lower-tiles` (passes/lower_tiles) rewrites a tiled kernel into the tile-level copy_in /
compute / copy_out and mmad / fixpipe program. The sim target builds an elementwise kernel from that
program (targets/sim/kernel.py TILE_PROGRAM_KINDS: sim-lower-tile-ops puts the tile ops in upstream
ops, so block split and UB tiles are the tiling record's); every other kernel the sim still lowers
from the tiled kernel's tensor ops and splits by its own schedule (targets/sim/schedule.py) into at
most the record's block_dim blocks, and the AscendC emitters print from the tiling record and
memory plan, not from the program. lower-tiles leaves opaque and conv kernels, rows split across
UB tiles that analysis/split_rows.py does not cover (a value broadcast back over the row), 0-d
arguments an ascend op reads as a tensor and NZ-stored cube operands as they are (those build from
the tensor ops). It runs inside the sim target's build, per kernel, not as a stage
over the module (the record keeps the tiled kernel, which the emitters read); npu-opt runs it after
this pipeline to show a kernel's tile-level program, checked by its lit file.
The sim target's own rewrites of a kernel on its way to LLVM (targets/sim/lowering.py: sim-normalize,
sim-predicates, sim-fusion-fence, sim-widen-panels, sim-unshare-empty-tensors, sim-copies-to-linalg,
sim-guard-integer-division, sim-truncate-f64, sim-scratch-allocator, sim-bf16-storage,
sim-bool-storage, sim-device-assert, sim-lower-tile-ops) are registered passes too, so npu-opt runs
each alone on its lit file. Its block split and host-register tiles of the kernels it builds from
tensor ops (targets/sim/schedule.py) are not passes yet, and do not read the record's UB tiles.

Each stage is a function from the shared `PipelineOptions` to pipeline elements (pass names as
npu-opt knows them), so `pipeline_text(options)` reproduces any compile with `npu-opt`.
"""

from dataclasses import dataclass

from torch_mlir import ir

from .errors import CompilerError
from .tools.pass_pipeline import build_pass_manager


@dataclass(frozen=True)
class PipelineOptions:
    """Switches shared by every stage; defaults are what torch.compile(backend="npu-mlir") uses."""

    chip: str = "Ascend910B1"
    from_torch: bool = True  # input is torch-dialect (backend contract); False: already linalg
    # Stage 5: cube operands in FRACTAL_NZ. An ND operand's cast joins its cube kernel (stage 6),
    # whose copy-in converts it GM -> L1, so formats add no kernel and no GM round trip.
    formats: bool = True
    max_kernel_ops: int = 64  # stage 6: largest fused kernel
    epilogue: bool = True  # stage 6: fuse elementwise consumers into matmul kernels
    until: str = "tile"  # last stage to run: "linalg", "ascend", "kernels" or "tile" (the whole pipeline)
    print_ir_after_all: bool = False


UNTIL = ("linalg", "ascend", "kernels", "tile")


def torch_backend(o: PipelineOptions) -> list[str]:
    # First: every later pass reads linalg; the torch-mlir pipelines are registered only once
    # torch_mlir.dialects.torch is imported, which build_pass_manager does for torch-* names.
    return ["torch-backend-to-linalg-on-tensors-backend-pipeline"] if o.from_torch else []


def fuse_linalg(o: PipelineOptions) -> list[str]:
    # Before raising: torch-mlir emits one generic per aten op; fused generics carry whole
    # chains (and reduction prologues) that raise into one connected group of ascend ops,
    # and broadcasts get folded into indexing maps on the way. After raising, linalg fusion
    # would no longer see them. Before fusion, while each generic is still one aten op: NaN made
    # to propagate through torch-mlir's max/min idioms (fused, a user's where(a > b, a, b) would
    # look the same), and index checks split off, or fusion copies their asserts into every
    # consumer of the index and those no longer raise.
    return ["ascend-propagate-nan", "ascend-split-index-checks", "linalg-fuse-elementwise-ops", "canonicalize", "cse"]


def attach_target(o: PipelineOptions) -> list[str]:
    # Before anything that sizes buffers (tile, plan-memory read the module's target).
    return [f"ascend-attach-target{{chip={o.chip}}}"]


def raise_to_ascend(o: PipelineOptions) -> list[str]:
    # canonicalize + cse afterwards fold the scalar arith raise hoists out of generic bodies
    # (e.g. truncf of a constant) and drop the dead fills / empties, so fusion sees no dead
    # producers and kernels get constants instead of host-computed scalars.
    return ["ascend-raise-linalg", "canonicalize", "cse"]


def assign_formats(o: PipelineOptions) -> list[str]:
    # After raising (it needs ascend.matmul / conv2d) and before outlining, which puts the casts
    # of cube operands into the cube kernel's copy-in (and conv's result cast into its copy-out);
    # a cast anything else reads is a kernel of its own. cse merges the casts of a weight used twice.
    # ascend-read-stored-formats first: an operand already stored in NZ needs no cast.
    return ["ascend-read-stored-formats", "ascend-assign-formats", "cse"] if o.formats else []


def outline_kernels(o: PipelineOptions) -> list[str]:
    epilogue = "true" if o.epilogue else "false"
    return [f"ascend-fuse{{max-ops={o.max_kernel_ops} epilogue={epilogue}}}", "canonicalize"]


def tile_kernels(o: PipelineOptions) -> list[str]:
    # Needs outlined kernels (it tiles each ascend.kernel) and the target's capacities; a host
    # function that still computes has nothing a tiling could describe.
    return ["ascend-verify-host", "ascend-tile"]


def plan_memory(o: PipelineOptions) -> list[str]:
    # Needs the tiling record: buffer sizes are per tile.
    return ["ascend-plan-memory"]


STAGES = {
    "linalg": (torch_backend, fuse_linalg),
    "ascend": (attach_target, raise_to_ascend, assign_formats),
    "kernels": (outline_kernels,),
    "tile": (tile_kernels, plan_memory),
}


class PipelineError(CompilerError):
    """A stage failed; the message holds the MLIR diagnostics with their locations."""


def pipeline_elements(o: PipelineOptions) -> list[str]:
    if o.until not in UNTIL:
        raise PipelineError(f"ERR03003 GRAPH unknown stage '{o.until}'; expected one of {', '.join(UNTIL)}")
    elements: list[str] = []
    for name in UNTIL[: UNTIL.index(o.until) + 1]:
        for stage in STAGES[name]:
            elements += stage(o)
    return elements


def pipeline_text(o: PipelineOptions) -> str:
    """The same pipeline as an npu-opt --pass-pipeline argument."""
    return f"builtin.module({', '.join(pipeline_elements(o))})"


# A compile worker runs the same pipeline on one module per miss: built once per context, a pass
# manager also keeps what its passes initialize (canonicalize's frozen patterns), ~2 ms a miss. Every
# dialect is loaded first, so those patterns cover dialects a later module brings in.
_pass_managers: dict[tuple, tuple[ir.Context, object]] = {}
_REUSED = 8  # contexts whose pass managers are kept (tests make many contexts; a worker has one)


def _pass_manager(elements: list[str]):
    context = ir.Context.current
    key = (id(context), tuple(elements))
    kept = _pass_managers.get(key)
    if kept is None:
        if len(_pass_managers) >= _REUSED:
            _pass_managers.clear()
        context.load_all_available_dialects()
        kept = _pass_managers[key] = (context, build_pass_manager(elements))
    return kept[1]


def run_pipeline(module: ir.Module, o: PipelineOptions = PipelineOptions()) -> None:
    """Compile `module` in place (raises PipelineError with the diagnostics on failure)."""
    if o.print_ir_after_all:
        pm = build_pass_manager(pipeline_elements(o))
        pm.enable_ir_printing(print_after_all=True)
    else:
        pm = _pass_manager(pipeline_elements(o))
    try:
        pm.run(module.operation)
    except ir.MLIRError as exc:
        lines = [f"{d.location}: {d.message}" for d in exc.error_diagnostics] or [exc.message]
        raise PipelineError("ERR03005 GRAPH compilation failed:\n" + "\n".join(lines)) from None
