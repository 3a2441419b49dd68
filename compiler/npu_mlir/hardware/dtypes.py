"""The element types: one table of how each is named and stored everywhere a dtype crosses a boundary.

An element type is spelled differently by each side that handles it: MLIR (`f32`), torch
(`torch.float32`), c10's ScalarType as the eager dispatcher reports it (`Float`), AscendC C++
(`float` for a GM / UB element, and a scalar-unit value type), and it takes so many bytes in
device memory. Every mapping between these spellings is derived from `DTYPES`, so adding or
changing a type is one row here. Pure Python: torch is named, never imported (npu-opt and the
dialect load without it), and so is MLIR (the user's process reads it on the hit path); `torch_dtype`
resolves a name when the caller has torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ElementType:
    mlir: str
    torch: str  # attribute of the torch module
    c10: str  # c10::ScalarType name
    bytes: int  # per element in device memory (a bool is one byte)
    ascendc: str | None  # C++ type of a GM / UB element in AscendC; None: the AI core has none
    value_ctype: str  # C++ type of a scalar value of this type (host-width for f64 parameters)
    sim: bool = True  # the simulated device computes on it (sim ABI, eager kernels)


DTYPES: tuple[ElementType, ...] = (
    ElementType("f32", "float32", "Float", 4, "float", "float"),
    ElementType("f16", "float16", "Half", 2, "half", "half"),
    ElementType("bf16", "bfloat16", "BFloat16", 2, "bfloat16_t", "bfloat16_t"),
    ElementType("f64", "float64", "Double", 8, None, "double"),
    ElementType("i64", "int64", "Long", 8, "int64_t", "int64_t"),
    ElementType("i32", "int32", "Int", 4, "int32_t", "int32_t"),
    ElementType("i16", "int16", "Short", 2, "int16_t", "int16_t"),
    ElementType("i8", "int8", "Char", 1, "int8_t", "int8_t"),
    # uint8 reaches kernels only as AscendC bytes (bool masks in GM); eager calls on it are refused.
    ElementType("ui8", "uint8", "Byte", 1, "uint8_t", "uint8_t", sim=False),
    # A bool tensor is one byte per element in GM (the bit masks Compare writes live only in UB).
    ElementType("i1", "bool", "Bool", 1, "uint8_t", "bool"),
)
BY_MLIR: dict[str, ElementType] = {t.mlir: t for t in DTYPES}
SIM_TYPES: tuple[ElementType, ...] = tuple(t for t in DTYPES if t.sim)
# Eager scalar parameters travel by value as 0-d tensors of these types (sim ABI scalar slots).
SCALAR_PARAM_TYPES = ("f64", "i64")


def torch_dtype(t: ElementType) -> Any:
    """The torch.dtype of `t` (imports torch)."""
    import torch

    return getattr(torch, t.torch)


def torch_to_mlir() -> dict[Any, str]:
    """torch.dtype -> MLIR name, for the types the simulated device computes on (imports torch)."""
    return {torch_dtype(t): t.mlir for t in SIM_TYPES}
