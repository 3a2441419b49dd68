"""Type queries shared by the ascend verifiers and passes (formats and memory spaces on types)."""

from __future__ import annotations

from torch_mlir import ir

from .dialect import FormatAttr, MemSpaceAttr


def is_scalar(t: ir.Type) -> bool:
    return isinstance(t, (ir.IntegerType, ir.FloatType, ir.IndexType))


def element_type(t: ir.Type) -> ir.Type:
    """The element type of a shaped type, or the type itself for a scalar."""
    return t.element_type if isinstance(t, ir.ShapedType) else t


def bit_width(t: ir.Type) -> int:
    t = element_type(t)
    return 64 if isinstance(t, ir.IndexType) else t.width


def tensor_format(t: ir.Type) -> str:
    """The data format of a tensor type: its #ascend.format encoding, ND when it has none."""
    enc = ir.RankedTensorType(t).encoding
    return FormatAttr(enc).name if isinstance(enc, FormatAttr) else "ND"


def with_format(t: ir.Type, fmt: str) -> ir.RankedTensorType:
    """`t` with its encoding set to `fmt` (ND drops the encoding)."""
    t = ir.RankedTensorType(t)
    enc = None if fmt == "ND" else FormatAttr.of(fmt)
    return ir.RankedTensorType.get(t.shape, t.element_type, enc)


def memref_space(t: ir.Type) -> str:
    """The memory space of a memref type: its #ascend.memspace, gm when it has none."""
    space = ir.MemRefType(t).memory_space
    if space is None:
        return "gm"
    return MemSpaceAttr(space).name if isinstance(space, MemSpaceAttr) else f"<{space}>"


def num_bytes(t: ir.ShapedType) -> int:
    n = 1
    for d in t.shape:
        n *= d
    return n * bit_width(t) // 8
