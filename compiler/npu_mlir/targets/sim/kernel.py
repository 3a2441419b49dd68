"""Build `ascend.kernel` ops (the fused, tiled kernels of the Ascend pipeline) for the simulated device.

The kernel body is lowered back to linalg (passes/lower_kernel_to_linalg) and compiled by
`compile_linalg` with the kernel's own `block_dim`, so the simulator runs the same fusion groups
and the same core split as the AscendC emitters. Arguments and results in a physical format
(FRACTAL_NZ, NC1HWC0, FRACTAL_Z) are passed in their storage shape, as on the device.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from torch_mlir import ir

from npu_mlir.passes.lower_kernel_to_linalg import kernel_to_linalg
from npu_mlir.passes.lower_kernel_to_linalg_ops import KernelLoweringError
from npu_mlir.targets.sim.build import CompiledKernel, SimTiling, compile_linalg
from npu_mlir.errors import SimCompileError


def kernel_ops(module: ir.Module) -> dict[str, ir.Operation]:
    """The module's ascend.kernel ops by symbol name."""
    return {ir.StringAttr(op.attributes["sym_name"]).value: op.operation
            for op in module.body.operations if op.operation.name == "ascend.kernel"}


def compile_ascend_kernel(kernel: ir.Operation, block_dim: int | None = None, *, scalar_args: Sequence[int] = (),
                          input_strides: Sequence[tuple[int, ...] | None] | None = None,
                          cache_dir: Path | None = None) -> CompiledKernel:
    """Compile one ascend.kernel; `block_dim` defaults to the one its tiling chose.

    `scalar_args` are the positions of 0-d f64/i64 arguments (scalar parameters) passed by value
    in an ABI scalar slot, as the eager dispatcher passes them; every other argument is a pointer.
    `input_strides` as in compile_linalg, per kernel argument.
    """
    name = ir.StringAttr(kernel.attributes["sym_name"]).value
    blocks = block_dim or (ir.IntegerAttr(kernel.attributes["block_dim"]).value if "block_dim" in kernel.attributes else 1)
    try:
        text = kernel_to_linalg(kernel)
    except KernelLoweringError as err:
        raise SimCompileError(f"kernel {name}: {err.detail}", code=err.code) from err
    return compile_linalg(f"module {{\n{text}\n}}", SimTiling(blocks), name=name, scalar_inputs=scalar_args,
                          input_strides=input_strides, cache_dir=cache_dir)
