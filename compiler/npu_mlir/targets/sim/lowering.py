"""The simulated-device pipeline: linalg on tensors -> tiled, vectorized LLVM dialect.

Stages, in order, each a function over one module in the sim context:
1. prepare: inline the user function into the ABI entry, fuse elementwise chains, generalize named
   ops (matmul, conv, fill) so one tiling rule sees every op's loop nest, and give keepdim
   reductions plain output maps (normalize.py) so the block split can slice them, and clone shared
   boolean ops into each consumer (predicates.py) so few i1 tensors are stored; costly elementwise
   ops feeding a contraction that would recompute them are fenced off from fusion (fusion_fence.py);
   long float32 sums get float64 accumulators (wide_accumulators.py), the fused terms stay f32.
2. schedule (schedule.py): half-precision contraction operands widened to f32 panels first
   (widen_panels.py), then block split (a slice kernel the tiling record left at one block is split
   over the vector cores), UB tiles, vectorization - on tensors, where fusion works.
3. bufferize (each tensor.empty use made distinct first, so no intermediate can share the output
   buffer): outputs become caller-provided buffers (`buffer-results-to-out-params` hoists each
   result's allocation onto the argument, so a block writes its slice straight into the output);
   intermediates are freed by the ownership-based deallocation pipeline.
4. vector lowering (sim_schedule.lower_vectors) - only after fold-memref-alias-ops and LICM, or the
   hoisting of accumulators out of reduction loops never fires.
5. to LLVM. Ordering constraints: polynomial math before any math lowering; f16/bf16 arithmetic is
   widened to f32, math ops on them too, each rounded back (LLVM has no native x86 arithmetic for
   them, and aborts on some vectors of them: fabs of vector<17xbf16>); math-to-llvm before
   vector-to-llvm; expand-strided-metadata before lower-affine; convert-ub-to-llvm because
   vectorization leaves ub.poison behind. Then bf16 data moves as i16 (bf16_storage.py): x86 cannot
   keep a bf16 value in a register across blocks without a compiler-rt call the JIT cannot resolve;
   and i1 vectors go to memory as bytes (bool_storage.py), the layout scalar accesses to an i1
   buffer use. Allocations go through the generic memref functions, defined in the module by
   scratch.py: each host thread keeps its freed scratch blocks for the next launch.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.passmanager import PassManager

from npu_mlir.hardware.soc import ASCEND910B1
from npu_mlir.passes.approximate_math import approximate_math
from npu_mlir.targets.sim.integer_division import guard_integer_division
from npu_mlir.targets.sim import schedule as sim_schedule
from npu_mlir.targets.sim.bf16_storage import store_bf16_as_i16
from npu_mlir.targets.sim.bool_storage import store_bools_as_bytes
from npu_mlir.targets.sim.copies_to_linalg import copies_to_linalg
from npu_mlir.targets.sim.device_assert import return_on_failed_asserts
from npu_mlir.targets.sim.fusion_fence import fence_recomputed_producers, remove_fences
from npu_mlir.targets.sim.normalize import drop_constant_output_dims
from npu_mlir.targets.sim.predicates import duplicate_shared_predicates
from npu_mlir.targets.sim.scratch import add_scratch_allocator
from npu_mlir.targets.sim.insert_windows import window_miswritten_inserts
from npu_mlir.targets.sim.tile_ops import bind_block_index, vectorize_tiles
from npu_mlir.targets.sim.truncate_f64 import truncate_f64_through_f32
from npu_mlir.targets.sim.unshare_empty import unshare_empty_tensors
from npu_mlir.targets.sim.widen_panels import pack_strided_operands, widen_half_operands
from npu_mlir.targets.sim.wide_accumulators import widen_long_sums

PREPARE = ("builtin.module(inline, symbol-dce, canonicalize, linalg-fuse-elementwise-ops, linalg-fold-unit-extent-dims, canonicalize, linalg-fuse-elementwise-ops, "
           "linalg-generalize-named-ops, canonicalize, cse)")
# No CSE before bufferization: it would merge the per-use tensor.empty ops (see unshare_empty.py).
BUFFERIZE = ("builtin.module(empty-tensor-to-alloc-tensor, "
             "one-shot-bufferize{bufferize-function-boundaries=1 function-boundary-type-conversion=identity-layout-map}, canonicalize, cse, "
             "buffer-results-to-out-params{hoist-static-allocs=1 modify-public-functions=1}, canonicalize, "
             "buffer-deallocation-pipeline, canonicalize, cse, fold-memref-alias-ops, canonicalize, "
             "loop-invariant-code-motion, cse)")
TO_LOOPS = "builtin.module(convert-linalg-to-loops, canonicalize, cse, loop-invariant-code-motion)"
TO_LLVM = ("builtin.module("
           "math-extend-to-supported-types{target-type=f32}, "
           "arith-emulate-unsupported-floats{source-types=bf16,f16 target-type=f32}, "
           "arith-expand{include-bf16=1}, canonicalize, "
           "convert-vector-to-scf{full-unroll=1}, convert-scf-to-cf, "
           "convert-math-to-llvm, convert-math-to-libm, "
           "convert-vector-to-llvm{reassociate-fp-reductions=1}, "
           "expand-strided-metadata, lower-affine, finalize-memref-to-llvm{use-generic-functions=1}, "
           "convert-arith-to-llvm, convert-index-to-llvm, convert-func-to-llvm, convert-cf-to-llvm, "
           "convert-ub-to-llvm, reconcile-unrealized-casts, canonicalize)")


# Each pipeline is parsed once per context and its pass manager reused, keeping what its passes
# initialize (canonicalize's frozen patterns: ~5-7 ms of CPU per kernel over this file's runs). Every
# dialect is loaded first, so those patterns cover dialects a later kernel brings in.
_pass_managers: dict[tuple[int, str], tuple[ir.Context, PassManager]] = {}
_REUSED = 32  # pass managers kept (one per pipeline and context: tests make many contexts, a worker one)


def run(module: ir.Module, pipeline: str) -> None:
    context = module.context
    key = (id(context), pipeline)
    if key not in _pass_managers:
        if len(_pass_managers) >= _REUSED:
            _pass_managers.clear()
        context.load_all_available_dialects()
        _pass_managers[key] = (context, PassManager.parse(pipeline, context))
    _pass_managers[key][1].run(module.operation)


def body_function(module: ir.Module, symbol: str) -> ir.Operation:
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == f"{symbol}_body":
            return op.operation
    raise ValueError(f"no function {symbol}_body in the kernel module")


def prepare(module: ir.Module) -> None:
    fence_recomputed_producers(module)
    run(module, PREPARE)
    drop_constant_output_dims(module)
    duplicate_shared_predicates(module)
    run(module, "builtin.module(canonicalize, linalg-fuse-elementwise-ops, canonicalize, cse)")
    remove_fences(module)
    window_miswritten_inserts(module)  # after the canonicalizations, which would fold its windows back
    widen_long_sums(module)  # after fusion: the sum's terms are computed in its body


def schedule(module: ir.Module, symbol: str, block_dim: int) -> int:
    """Block split (returns the block count used, 0 if the split had to be abandoned) + UB tiling."""
    if bind_block_index(module.operation, body_function(module, symbol)):
        # A tile-level program (tile_ops.py) splits and tiles itself as its tiling record says.
        vectorize_tiles(module, body_function(module, symbol))
        return block_dim
    widen_half_operands(body_function(module, symbol))
    pack_strided_operands(body_function(module, symbol))
    if block_dim <= 1 and sim_schedule.slices_of_arguments(body_function(module, symbol)):
        # The tiling record leaves slice kernels unsplit (opaque); the sim splits their copies.
        sim_schedule.copy_slices_through_generics(module, body_function(module, symbol))
        block_dim = ASCEND910B1.cores("aiv")
    used = sim_schedule.split_over_blocks(module, body_function(module, symbol), block_dim)
    if used == 0:
        return 0
    sim_schedule.tile_and_vectorize(module, body_function(module, symbol))
    return used


def lower(module: ir.Module, symbol: str) -> bool:
    """Lower to LLVM; True if the body checks device-side assertions (the wrapper returns their status)."""
    unshare_empty_tensors(module)
    run(module, BUFFERIZE)
    copies_to_linalg(module)
    sim_schedule.vectorize_copies(module)
    sim_schedule.lower_vectors(module)
    run(module, TO_LOOPS)
    approximate_math(module)
    guard_integer_division(module)
    truncate_f64_through_f32(module)
    add_scratch_allocator(module)
    run(module, TO_LLVM)
    store_bf16_as_i16(module)
    store_bools_as_bytes(module.operation)
    return return_on_failed_asserts(module, f"{symbol}_body")
