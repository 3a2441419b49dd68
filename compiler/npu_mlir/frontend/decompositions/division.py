"""fmod and floor division as torch computes them.

torch-mlir lowers fmod to a - b * trunc(a / b), which rounds the quotient first: fmod(1.0, 0.1) gave
0 where torch gives 0.09999999 (IEEE fmod is exact). Its remainder is exact (arith.remf, whose
sign follows the dividend, adjusted to the divisor's sign), so fmod here is the remainder of the
magnitudes given the dividend's sign. torch-mlir lowers div(rounding_mode="floor") and
floor_divide to floor(a / b): floor_divide(1.0, 0.1) gave 10 where torch gives 9, and an infinite
dividend gave inf where torch gives NaN. torch's CPU and CUDA kernels take the quotient of
a - fmod(a, b), step it down where the remainder's sign is not the divisor's, and round what floor
leaves over 0.5; so does this rewrite. Half-precision inputs compute in float32, as torch's opmath.
Integer floor division: torch-mlir divides in f64 and floors, which rounds int64 quotients beyond
2^53 ((2^53 + 1) // 1 gave 2^53) and turns a zero divisor into a silent INT_MIN; here it is the
truncating integer division stepped down where the remainder's sign is not the divisor's, whose zero
divisor fails the kernel as the CPU raises ZeroDivisionError (targets/sim/integer_division.py).
Imported by retrace.py.
"""

from __future__ import annotations

from typing import Callable

import torch

from npu_mlir.frontend.decompositions.precision import HALF

aten = torch.ops.aten


def _opmath(a: torch.Tensor, b: torch.Tensor | float,
            round_divisor: bool) -> tuple[torch.Tensor, torch.Tensor, torch.dtype]:
    """Both in the compute dtype, and the result dtype. A number divisor reaches torch's fmod
    rounded to the result dtype, but its division kernels read it at compute precision."""
    result = torch.result_type(a, b)
    compute = torch.float32 if result in HALF else result
    b = torch.as_tensor(b, device=a.device)
    return a.to(compute), (b.to(result) if round_divisor else b).to(compute), result


def _negative(x: torch.Tensor) -> torch.Tensor:
    """The sign bit: true for -0.0 too."""
    return (x < 0) | ((x == 0) & (1 / x < 0))


def _fmod(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    r = torch.remainder(torch.abs(a), torch.abs(b))  # both non-negative: exactly fmod's magnitude
    return torch.where(_negative(a), -r, r)


def fmod(self: torch.Tensor, other: torch.Tensor | float) -> torch.Tensor:
    if not torch.result_type(self, other).is_floating_point:
        return aten.fmod.Tensor(self, torch.as_tensor(other, device=self.device))
    a, b, result = _opmath(self, other, round_divisor=True)
    return _fmod(a, b).to(result)


def _floor_divide(a: torch.Tensor, b: torch.Tensor | float) -> torch.Tensor:
    a, b, result = _opmath(a, b, round_divisor=False)
    mod = _fmod(a, b)
    div = (a - mod) / b
    div = torch.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
    floor = torch.floor(div)
    floor = torch.where(div - floor > 0.5, floor + 1, floor)
    quotient = a / b
    floor = torch.where(div != 0, floor, torch.where(_negative(quotient), -0.0, 0.0))  # copysign(0, a / b)
    return torch.where(b == 0, quotient, floor).to(result)


def _integer_floor_divide(a: torch.Tensor, b: torch.Tensor | int) -> torch.Tensor:
    result = torch.result_type(a, b)
    a, b = a.to(result), torch.as_tensor(b, device=a.device).to(result)
    quotient = aten.div.Tensor_mode(a, b, rounding_mode="trunc")
    rest = a - quotient * b
    # Subtracting the step as a tensor: torch-mlir crashes on an int8 tensor minus the number 1.
    return quotient - ((rest != 0) & ((rest < 0) != (b < 0))).to(result)


def _any_floor_divide(a: torch.Tensor, b: torch.Tensor | float) -> torch.Tensor | None:
    """The rewrite for a's and b's result dtype; None for bool, which keeps the op's own lowering."""
    result = torch.result_type(a, b)
    if result.is_floating_point:
        return _floor_divide(a, b)
    return None if result == torch.bool else _integer_floor_divide(a, b)


def _floor_mode(op: torch._ops.OpOverload) -> Callable:
    def rewrite(self: torch.Tensor, other: torch.Tensor | float, *, rounding_mode: str | None = None) -> torch.Tensor:
        floor = _any_floor_divide(self, other) if rounding_mode == "floor" else None
        return op(self, other, rounding_mode=rounding_mode) if floor is None else floor

    return rewrite


def _floor_divide_op(op: torch._ops.OpOverload) -> Callable:
    def rewrite(self: torch.Tensor, other: torch.Tensor | float) -> torch.Tensor:
        floor = _any_floor_divide(self, other)
        return op(self, other) if floor is None else floor

    return rewrite


DIVISION: dict[torch._ops.OpOverload, Callable] = {
    aten.fmod.Tensor: fmod,
    aten.fmod.Scalar: fmod,
    aten.div.Tensor_mode: _floor_mode(aten.div.Tensor_mode),
    aten.div.Scalar_mode: _floor_mode(aten.div.Scalar_mode),
    aten.floor_divide.default: _floor_divide_op(aten.floor_divide.default),
    aten.floor_divide.Scalar: _floor_divide_op(aten.floor_divide.Scalar),
}
