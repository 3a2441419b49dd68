"""Build `ascend.kernel` ops (the fused, tiled kernels of the Ascend pipeline) for the simulated device.

A kernel of a kind in TILE_PROGRAM_KINDS is built from its tile-level program: ascend-lower-tiles
writes it (block split, UB tiles and copies as the tiling record lays them out) and
sim-lower-tile-ops puts its tile ops in upstream ops (targets/sim/tile_ops.py), so the simulator
runs the very program the tiling describes. Any other kernel body is lowered back to linalg
(passes/lower_kernel_to_linalg) and split by the sim's own schedule into at most the kernel's
`block_dim` blocks. Both are compiled by `compile_linalg`, so the simulator runs the same fusion
groups as the AscendC emitters. Arguments and results in a physical format
(FRACTAL_NZ, NC1HWC0, FRACTAL_Z) are passed in their storage shape, as on the device.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from torch_mlir import ir

from npu_mlir.dialects.ascend import module_soc
from npu_mlir.passes import lower_tiles
from npu_mlir.passes.lower_kernel_to_linalg import kernel_to_linalg, opaque_to_func
from npu_mlir.passes.lower_kernel_to_linalg_ops import KernelLoweringError
from npu_mlir.targets.sim.build import CompiledKernel, SimTiling, compile_linalg
from npu_mlir.targets.sim import tile_ops
from npu_mlir.errors import SimCompileError

# Tiling kinds whose sim build is the tile-level program; the switch ends with every kind in it.
TILE_PROGRAM_KINDS = frozenset({"elementwise"})


def kernel_ops(module: ir.Module) -> dict[str, ir.Operation]:
    """The module's ascend.kernel ops by symbol name."""
    return {ir.StringAttr(op.attributes["sym_name"]).value: op.operation
            for op in module.body.operations if op.operation.name == "ascend.kernel"}


def compile_ascend_kernel(kernel: ir.Operation, block_dim: int | None = None, *, scalar_args: Sequence[int] = (),
                          input_strides: Sequence[tuple[int, ...] | None] | None = None,
                          cache_dir: Path | None = None) -> CompiledKernel:
    """Compile one ascend.kernel; `block_dim` defaults to the one its tiling chose (a kernel built from
    its tile program always runs the record's: the program divides the work by it).

    `scalar_args` are the positions of 0-d f64/i64 arguments (scalar parameters) passed by value
    in an ABI scalar slot, as the eager dispatcher passes them; every other argument is a pointer.
    `input_strides` as in compile_linalg, per kernel argument.
    """
    name = ir.StringAttr(kernel.attributes["sym_name"]).value
    blocks = block_dim or (ir.IntegerAttr(kernel.attributes["block_dim"]).value if "block_dim" in kernel.attributes else 1)
    if input_strides is None or all(s is None for s in input_strides):  # the program's copies read dense tensors
        try:
            program = tile_program(kernel)
            if program is not None:  # it divides the work by its record's block_dim
                return compile_linalg(f"module {{\n{program}\n}}", SimTiling(_record_blocks(kernel)), name=name,
                                      scalar_inputs=scalar_args, input_strides=input_strides, cache_dir=cache_dir)
        except SimCompileError:
            pass  # the program's build failed: the kernel builds from its tensor ops instead
    try:
        text = kernel_to_linalg(kernel)
    except KernelLoweringError as err:
        raise SimCompileError(f"kernel {name}: {err.detail}", code=err.code) from err
    return compile_linalg(f"module {{\n{text}\n}}", SimTiling(blocks), name=name, scalar_inputs=scalar_args,
                          input_strides=input_strides, cache_dir=cache_dir)


def _record_blocks(kernel: ir.Operation) -> int:
    return ir.IntegerAttr(kernel.attributes["block_dim"]).value


def _moves_bools(kernel: ir.Operation) -> bool:
    signature = ir.FunctionType(ir.TypeAttr(kernel.attributes["function_type"]).value)
    return any(isinstance(t, ir.ShapedType) and ir.ShapedType(t).element_type == ir.IntegerType.get_signless(1)
               for t in list(signature.inputs) + list(signature.results))


def tile_program(kernel: ir.Operation, kinds: frozenset[str] | None = None) -> str | None:
    """The functions (public @main, its private tile-op helpers) of `kernel`'s tile-level program in
    upstream ops, as text; None when its kind is not in `kinds` (default TILE_PROGRAM_KINDS) or
    ascend-lower-tiles leaves it as it is, or it or sim-lower-tile-ops cannot lower it (the tensor-op
    build takes it then)."""
    tiling = ir.DictAttr(kernel.attributes["tiling"])
    if "kind" not in tiling or ir.StringAttr(tiling["kind"]).value not in (TILE_PROGRAM_KINDS if kinds is None else kinds):
        return None
    if kinds is None and _moves_bools(kernel):
        # In the product, a bool argument or result of a program with more than one UB tile per
        # block came back wrong (a > b over 1000 x 1000: every comparison and where; silently):
        # built from its tensor ops until sim-lower-tile-ops moves i1 tiles right.
        return None
    try:
        lowered = lower_tiles.lower_kernel(kernel, module_soc(kernel.parent))
    except ValueError:  # a body lower-tiles has no tile copy for (a vector operand computed on the scalar unit)
        return None
    if lowered is None:
        return None
    program = ir.Module.parse(lowered, kernel.context)
    module = ir.Module.parse(f"module {{\n{opaque_to_func(program.body.operations[0].operation, 'main')}\n}}",
                             kernel.context)
    main = module.body.operations[0].operation
    main.attributes[tile_ops.BLOCK_DIM_ATTR] = kernel.attributes["block_dim"]
    try:
        tile_ops.lower_tile_ops(module.operation, main)
    except ValueError:  # a tile op or kind the sim has no lowering for yet
        return None
    return "\n".join(str(op) for op in module.body.operations)
