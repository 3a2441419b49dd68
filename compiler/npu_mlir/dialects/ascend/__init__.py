"""The `ascend` dialect: attributes, tensor-level ops, kernels and tile-level ops.

`load_ascend(ctx)` makes the dialect available in a Context (idempotent); ops parsed afterwards
come back as the classes below. See the submodules' docstrings for each op's semantics.
"""

from __future__ import annotations

from torch_mlir import ir
from torch_mlir.dialects._ods_common import _cext

from .dialect import (
    MEMORY_SPACES, TARGET_ATTR, Ascend, AscendOp, FormatAttr, MemSpaceAttr, TargetAttr, module_soc,
)
from .formats import FORMATS, FORMAT_NAMES, PHYSICAL_FORMATS, Format, rank_error, storage_shape
from .kernel_ops import CORE_TYPES, FUSION_KINDS, KernelOp, LaunchOp, YieldOp, find_kernel
from .shaped import bit_width, element_type, is_scalar, memref_space, num_bytes, tensor_format, with_format
from .tensor_ops import (
    BINARY_KINDS, COMPARE_PREDICATES, REDUCE_KINDS, TERNARY_KINDS, UNARY_KINDS,
    BatchMatmulOp, BinaryOp, BroadcastOp, CastOp, CompareOp, Conv2dOp, FormatCastOp, MatmulOp,
    ReduceOp, SelectOp, TernaryOp, TransposeOp, UnaryOp,
)
from .tile_ops import (
    PIPES, AllocOp, BarrierOp, BlockIdxOp, BlockNumOp, CopyInOp, CopyOutOp, FixpipeOp, LoadL0Op,
    MmadOp, SetFlagOp, VBinaryOp, VBroadcastOp, VCastOp, VCompareOp, VDupOp, VReduceOp, VSelectOp,
    VTernaryOp, VUnaryOp, WaitFlagOp,
)


# The bindings look up a Python module per dialect namespace whenever they wrap an op, and a
# failed lookup is not cached: without this prefix every ascend op wrapped re-runs the import
# machinery for `torch_mlir.dialects.ascend` (half the time of ascend-fuse).
if "npu_mlir.dialects" not in _cext.globals.dialect_search_modules:
    _cext.globals.append_dialect_search_prefix("npu_mlir.dialects")


def load_ascend(ctx: ir.Context | None = None) -> None:
    """Load the ascend dialect into `ctx` (default: the current Context) unless it already is."""
    ctx = ctx or ir.Context.current
    if ctx.is_dialect_loaded(Ascend.DIALECT_NAMESPACE):
        return
    with ctx:
        Ascend.load()


__all__ = [name for name in dir() if not name.startswith("_") and name not in ("annotations", "ir")]
