"""Ops on the representation of floating-point numbers: frexp and nextafter.

torch-mlir lowers neither. Both compute in float64, where every float32 / float16 / bfloat16 value,
its mantissa and its neighbours are exact: frexp's exponent comes from log2 and is corrected by one
where log2 rounded across a power of two; nextafter steps by the spacing of the input's dtype at
its exponent (the smaller spacing below an exact power of two, the subnormal spacing under the
smallest normal number). Imported by retrace.py.
"""

from __future__ import annotations

from typing import Callable

import torch

aten = torch.ops.aten
# dtype -> (mantissa bits with the implicit one, frexp exponent of the smallest normal number)
FORMATS = {torch.float32: (24, -125), torch.float16: (11, -13), torch.bfloat16: (8, -125),
           torch.float64: (53, -1021)}


def _frexp64(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(mantissa in [0.5, 1) with x's sign, exponent as float64) of a float64 x; (x, 0) for 0, inf, NaN."""
    a = x.abs()
    regular = (a > 0) & torch.isfinite(a)
    e = torch.floor(torch.log2(torch.where(regular, a, 1.0))) + 1.0
    m = x * torch.exp2(-e)
    e = torch.where(m.abs() >= 1.0, e + 1.0, torch.where(m.abs() < 0.5, e - 1.0, e))
    m = x * torch.exp2(-e)
    return torch.where(regular, m, x), torch.where(regular, e, 0.0)


def frexp(self: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    if self.dtype not in FORMATS or self.dtype == torch.float64:
        raise NotImplementedError(f"frexp of {self.dtype} runs on the CPU fallback")
    mantissa, exponent = _frexp64(self.to(torch.float64))
    return mantissa.to(self.dtype), exponent.to(torch.int32)


def nextafter(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    dtype = torch.result_type(self, other)
    if dtype not in FORMATS or dtype == torch.float64:
        raise NotImplementedError(f"nextafter of {dtype} runs on the CPU fallback")
    bits, smallest = FORMATS[dtype]
    x, y = self.to(dtype).to(torch.float64), other.to(dtype).to(torch.float64)
    mantissa, exponent = _frexp64(x)
    growing = (y > x) == (x > 0)  # the step moves away from zero
    spacing = torch.exp2(torch.clamp(exponent, min=smallest) - bits)
    # Just below a power of two the numbers are twice as dense (down to the smallest normal one).
    spacing = torch.where(~growing & (mantissa.abs() == 0.5) & (exponent > smallest), spacing / 2, spacing)
    stepped = x + torch.where(y > x, spacing, -spacing)
    tiniest = torch.where(y > 0, 1.0, -1.0) * 2.0 ** (smallest - bits)
    largest = torch.finfo(dtype).max
    out = torch.where(x == 0, tiniest, torch.where(torch.isinf(x), torch.sign(x) * largest, stepped))
    out = torch.where(x == y, y, out)
    return torch.where(torch.isnan(x) | torch.isnan(y), float("nan"), out).to(dtype)


FLOATING: dict[torch._ops.OpOverload, Callable] = {
    aten.frexp.Tensor: frexp,
    aten.nextafter.default: nextafter,
}
