"""Pass names -> lazily imported callables, shared by `npu-opt` and `pipeline.py`.

Contract of a pass: a module-level function
    run(module: ir.Operation, *, <option>: <type> = <default>, ...) -> bool | None
that rewrites the builtin.module `module` in place (walking functions/kernels itself: Python
passes run at module level, see PLATFORM-NOTES). It reports bad input as MLIR diagnostics on the
offending op's location (`op.location.emit_error(...)`) and returns False; anything else is
success. Options are keyword arguments: the kebab-case option `max-ops` is `max_ops`, typed by its
default. Entries stay strings so `npu-opt --list-passes` imports no pass module.
"""

import importlib
import inspect
import os
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from torch_mlir import ir

from ..errors import INVALID_PARAMETER, CompilerError


@dataclass(frozen=True)
class PassInfo:
    name: str
    target: str  # "module:function"
    summary: str
    options: dict[str, str] = field(default_factory=dict)  # option -> help


def _entry(name: str, target: str, summary: str, **options: str) -> tuple[str, PassInfo]:
    return name, PassInfo(name, target, summary, {k.replace("_", "-"): v for k, v in options.items()})


PASSES: dict[str, PassInfo] = dict(
    [
        _entry("ascend-propagate-nan", "npu_mlir.passes.propagate_nan:run",
               "Make torch-mlir's maximum/minimum and argmax/argmin reductions propagate NaN as torch does"),
        _entry("ascend-split-index-checks", "npu_mlir.passes.split_index_checks:run",
               "Move index-bounds asserts that guard no memory access out of the generics that use the index"),
        _entry("ascend-attach-target", "npu_mlir.passes.attach_target:run",
               "Attach the NPU hardware model as the module's ascend.target attribute",
               chip="SoC model name (default Ascend910B1)"),
        _entry("ascend-raise-linalg", "npu_mlir.passes.raise_linalg:run",
               "Raise linalg named ops and elementwise/reduction linalg.generic to ascend tensor ops"),
        _entry("ascend-read-stored-formats", "npu_mlir.passes.read_stored_formats:run",
               "Read a matmul operand stored in FRACTAL_NZ as it is: drop the traced unpacking prologue"),
        _entry("ascend-assign-formats", "npu_mlir.passes.assign_formats:run",
               "Give cube operands FRACTAL_NZ and conv operands NC1HWC0/FRACTAL_Z; cancel and fold casts",
               cube_nz="use FRACTAL_NZ for matmul operands (default true)",
               conv_formats="use NC1HWC0/FRACTAL_Z for conv2d (default true)"),
        _entry("ascend-fuse", "npu_mlir.passes.fuse:run",
               "Group elementwise chains, reductions and matmul epilogues; outline each to an ascend.kernel",
               max_ops="largest number of ops in one kernel (default 64)",
               epilogue="fuse elementwise consumers into matmul kernels (default true)"),
        _entry("ascend-verify-host", "npu_mlir.passes.verify_host:run",
               "Reject host functions that compute: only launches and reshapes may stay outside kernels"),
        _entry("ascend-tile", "npu_mlir.passes.tile:run",
               "Split kernels over cores and into UB / L0 tiles; record the tiling on the kernel"),
        _entry("ascend-plan-memory", "npu_mlir.passes.plan_memory:run",
               "Assign on-chip buffer offsets by liveness and check capacities"),
        _entry("ascend-lower-tiles", "npu_mlir.passes.lower_tiles:run",
               "Lower tiled kernels to copy_in / compute / copy_out tile-level ops"),
        # The sim target's own rewrites of a kernel's linalg (targets/sim/lowering.py runs them).
        _entry("sim-normalize", "npu_mlir.targets.sim.normalize:run",
               "Drop the constant unit dims of keepdim reduction outputs so the block split can slice them"),
        _entry("sim-insert-windows", "npu_mlir.targets.sim.insert_windows:run",
               "Rewrite the tensor.insert_slice ops the linalg vectorizer writes wrongly (a non-unit stride, "
               "a column) as a select over a unit-stride window"),
        _entry("sim-wide-accumulators", "npu_mlir.targets.sim.wide_accumulators:run",
               "Keep the float32 accumulators of long sums (not contractions) in float64, rounded once after the op"),
        _entry("sim-predicates", "npu_mlir.targets.sim.predicates:run",
               "Clone each shared i1 elementwise linalg.generic per consumer so no bool tensor is stored"),
        _entry("sim-fusion-fence", "npu_mlir.targets.sim.fusion_fence:run",
               "Fence costly producers a contraction would recompute, and reshapes merging a matmul's "
               "reduced dim, from linalg-fuse-elementwise-ops",
               remove="erase the fences instead, after the fusion passes (default false)"),
        _entry("sim-bf16-storage", "npu_mlir.targets.sim.bf16_storage:run",
               "Move bf16 data as i16 in an LLVM-dialect kernel so LLVM never holds a bf16 value"),
        _entry("sim-bool-storage", "npu_mlir.targets.sim.bool_storage:run",
               "Load and store i1 vectors of an LLVM-dialect kernel as bytes, the layout scalar accesses use"),
        _entry("sim-truncate-f64", "npu_mlir.targets.sim.truncate_f64:run",
               "Narrow f64 to f16/bf16 through f32 so LLVM emits no compiler-rt conversion call"),
        _entry("sim-widen-panels", "npu_mlir.targets.sim.widen_panels:run",
               "Widen half-precision contraction operands to f32 panels and pack transposed ones row-major, "
               "once per block instead of per register tile"),
        _entry("sim-unshare-empty-tensors", "npu_mlir.targets.sim.unshare_empty:run",
               "Give every use of a tensor.empty its own, so bufferization lets no two ops share a buffer"),
        _entry("sim-copies-to-linalg", "npu_mlir.targets.sim.copies_to_linalg:run",
               "Turn memref.copy into linalg.copy, which lowers to loops instead of a runner-library call"),
        _entry("sim-scratch-allocator", "npu_mlir.targets.sim.scratch:run",
               "Define the generic memref allocation functions with per-thread kept scratch blocks"),
        _entry("sim-lower-tile-ops", "npu_mlir.targets.sim.tile_ops:run",
               "Lower ascend-lower-tiles' tile-level ops (alloc, copies, vector ops, mmad, flags) of a kernel "
               "function to memref / linalg ops the sim builds"),
        _entry("sim-device-assert", "npu_mlir.targets.sim.device_assert:run",
               "Turn a failed assertion's abort in an LLVM-dialect kernel into a status store and a return",
               function="the kernel body's llvm.func (default: every void llvm.func)"),
        _entry("sim-guard-integer-division", "npu_mlir.targets.sim.integer_division:run",
               "Give integer divisions a divisor that cannot trap the host; a zero divisor fails the kernel"),
        _entry("ascend-approximate-math", "npu_mlir.passes.approximate_math:run",
               "Replace math.exp/log/tanh/erf with polynomial approximations"),
    ]
)


class PassOptionError(CompilerError, ValueError):
    """A pass name or option that the registry does not know or cannot convert."""

    code = INVALID_PARAMETER


def lookup(name: str) -> PassInfo:
    if name not in PASSES:
        raise PassOptionError(f"ERR03008 GRAPH unknown pass '{name}'; see npu-opt --list-passes")
    return PASSES[name]


def load(name: str) -> Callable[..., bool | None]:
    """Import and return the run function of pass `name`."""
    module, func = lookup(name).target.split(":")
    return getattr(importlib.import_module(module), func)


def _convert(name: str, option: str, text: str, default: object) -> object:
    if isinstance(default, bool):
        if text.lower() in ("1", "true", "on", ""):
            return True
        if text.lower() in ("0", "false", "off"):
            return False
    else:
        try:
            return type(default)(text) if default is not None else text
        except ValueError:
            pass
    raise PassOptionError(
        f"ERR03003 GRAPH option {option}={text!r} of pass {name} is not a {type(default).__name__}"
    )


def bind_options(name: str, options: Mapping[str, str]) -> dict[str, object]:
    """Turn textual `options` (kebab-case) into keyword arguments of pass `name`'s run function."""
    params = inspect.signature(load(name)).parameters
    kwargs = {}
    for option, text in options.items():
        key = option.replace("-", "_")
        if key not in params or params[key].kind is not inspect.Parameter.KEYWORD_ONLY:
            known = ", ".join(p.replace("_", "-") for p, v in params.items() if v.kind is v.KEYWORD_ONLY)
            raise PassOptionError(
                f"ERR03003 GRAPH pass {name} has no option '{option}' (options: {known or 'none'})"
            )
        kwargs[key] = _convert(name, option, text, params[key].default)
    return kwargs


def external_pass(name: str, options: Mapping[str, str] | None = None) -> Callable:
    """Return a callable for `PassManager.add` running pass `name` with `options`.

    A Python exception inside a pass becomes an error diagnostic on the module (the traceback is
    printed only when NPU_MLIR_DEBUG is set) and fails the pass manager run.
    """
    run = load(name)
    kwargs = bind_options(name, options or {})

    def run_pass(op: ir.Operation, pass_) -> None:
        try:
            # Ops built without an explicit location get the module's.
            with op.context, op.location:
                ok = run(op, **kwargs)
        except Exception as exc:  # a pass bug must surface as a diagnostic, not a traceback
            if os.environ.get("NPU_MLIR_DEBUG"):
                traceback.print_exc()
            op.location.emit_error(f"ERR03005 GRAPH internal error in pass {name}: {type(exc).__name__}: {exc}")
            ok = False
        if ok is False:
            pass_.signal_pass_failure()

    run_pass.__name__ = name.replace("-", "_")
    return run_pass
