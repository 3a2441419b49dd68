"""Special functions torch-mlir does not lower, stated with the ops it does (exp, log, erf, sin, tan).

Each follows the CPU kernel's algorithm in ATen/native/Math.h (Cephes-derived: the same recurrences,
reflections and asymptotic series, unrolled to a fixed number of steps with `where` instead of
loops), so the numbers are torch's to float32 rounding:
- digamma: reflection for x < 0, ten recurrence steps up to x >= 10, the asymptotic series;
- trigamma (polygamma n = 1): reflection below 0.5, six recurrence steps, the asymptotic series;
- lgamma: reflection for x < 0.5, recurrence up to x >= 8, Stirling's series;
- erfinv: Giles' single-precision polynomials refined by two Newton steps on erf;
- erfc as 1 - erf (absolute error ~6e-8), entr and xlog1py with torch's zero / NaN cases.
Half-precision inputs compute in float32 and round once, as torch's CPU kernels do. Imported by
retrace.py.
"""

from __future__ import annotations

import math
from typing import Callable

import torch

aten = torch.ops.aten
HALF = (torch.float16, torch.bfloat16)
DIGAMMA_SERIES = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
                  -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
                  8.33333333333333333333E-2)  # Math.h calc_digamma's A, highest power first


def _float(x: torch.Tensor) -> torch.Tensor:
    if not x.is_floating_point():
        return x.to(torch.get_default_dtype())
    return x.float() if x.dtype in HALF else x


def _result(x: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    return value.to(x.dtype) if x.is_floating_point() else value


def _polevl(z: torch.Tensor, coefficients: tuple[float, ...]) -> torch.Tensor:
    out = torch.full_like(z, coefficients[0])
    for c in coefficients[1:]:
        out = out * z + c
    return out


def _digamma_positive(x: torch.Tensor) -> torch.Tensor:
    """digamma for x > 0: ten recurrence steps, then the asymptotic series at x >= 10."""
    result = torch.zeros_like(x)
    for _ in range(10):
        small = x < 10
        result = result - torch.where(small, 1.0 / x, 0.0)
        x = torch.where(small, x + 1.0, x)
    z = 1.0 / (x * x)
    return result + torch.log(x) - 0.5 / x - z * _polevl(z, DIGAMMA_SERIES)


def digamma(self: torch.Tensor) -> torch.Tensor:
    x = _float(self)
    negative = x < 0
    core = _digamma_positive(torch.where(negative, 1.0 - x, x))
    fraction = x - torch.trunc(x)
    reflected = core - math.pi / torch.tan(math.pi * fraction)
    out = torch.where(negative, reflected, core)
    out = torch.where(negative & (fraction == 0), float("nan"), out)  # negative integers
    # +-0 gives -+inf (copysign(inf, -x)): 1 / 0.0 is +inf, 1 / -0.0 is -inf.
    out = torch.where(x == 0, -torch.sign(1.0 / x) * float("inf"), out)
    return _result(self, out)


def trigamma(self: torch.Tensor) -> torch.Tensor:
    x = _float(self)
    low = x < 0.5
    sin_pi_x = torch.sin(math.pi * x)
    result = torch.where(low, -(math.pi * math.pi) / (sin_pi_x * sin_pi_x), 0.0)
    x = torch.where(low, 1.0 - x, x)
    for _ in range(6):
        result = result + 1.0 / (x * x)
        x = x + 1.0
    ixx = 1.0 / (x * x)
    result = result + (1.0 + 1.0 / (2.0 * x) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / x
    return _result(self, torch.where(low, -result, result))


def polygamma(n: int, self: torch.Tensor) -> torch.Tensor:
    if n == 0:
        return digamma(self)
    if n == 1:
        return trigamma(self)
    raise NotImplementedError("polygamma of order >= 2 runs on the CPU fallback")


def _lgamma_positive(x: torch.Tensor) -> torch.Tensor:
    """log|Gamma(x)| for x >= 0.5: recurrence up to x >= 8, then Stirling's series."""
    shift = torch.zeros_like(x)
    for _ in range(8):
        small = x < 8
        shift = shift + torch.where(small, torch.log(x), 0.0)
        x = torch.where(small, x + 1.0, x)
    inv = 1.0 / x
    inv2 = inv * inv
    series = inv * (1.0 / 12 - inv2 * (1.0 / 360 - inv2 * (1.0 / 1260 - inv2 * (1.0 / 1680))))
    return (x - 0.5) * torch.log(x) - x + 0.5 * math.log(2 * math.pi) + series - shift


def lgamma(self: torch.Tensor) -> torch.Tensor:
    x = _float(self)
    low = x < 0.5
    core = _lgamma_positive(torch.where(low, 1.0 - x, x))
    # Reflection: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x); poles (x a non-positive integer) are inf.
    sin_pi_x = torch.abs(torch.sin(math.pi * (x - torch.floor(x))))
    reflected = math.log(math.pi) - torch.log(sin_pi_x) - core
    out = torch.where(low, reflected, core)
    out = torch.where(low & (x == torch.floor(x)), float("inf"), out)
    out = torch.where(torch.isinf(x), float("inf"), out)
    return _result(self, out)


def erfc(self: torch.Tensor) -> torch.Tensor:
    x = _float(self)
    return _result(self, 1.0 - torch.erf(x))


GILES_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                 -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
GILES_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
              -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def erfinv(self: torch.Tensor) -> torch.Tensor:
    y = _float(self)
    w = -torch.log((1.0 - y) * (1.0 + y))
    central = _polevl(w - 2.5, GILES_CENTRAL)
    tail = _polevl(torch.sqrt(w) - 3.0, GILES_TAIL)
    x = torch.where(w < 5.0, central, tail) * y
    for _ in range(2):  # Newton on erf(x) = y, as the CPU kernel refines its rational guess
        step = (torch.erf(x) - y) / (2.0 / math.sqrt(math.pi) * torch.exp(-x * x))
        x = torch.where(torch.isfinite(x), x - step, x)
    x = torch.where(torch.abs(y) == 1.0, y * float("inf"), x)
    return _result(self, torch.where(torch.abs(y) > 1.0, float("nan"), x))


def entr(self: torch.Tensor) -> torch.Tensor:
    x = _float(self)
    out = torch.where(x > 0, -x * torch.log(torch.where(x > 0, x, 1.0)), torch.where(x == 0, 0.0, float("-inf")))
    return _result(self, torch.where(torch.isnan(x), x, out))


def xlog1py(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    dtype = torch.result_type(self, other)
    dtype = dtype if dtype.is_floating_point else torch.get_default_dtype()
    compute = torch.float32 if dtype in HALF else dtype
    x, y = self.to(compute), other.to(compute)
    out = torch.where((x == 0) & ~torch.isnan(y), 0.0, x * torch.log1p(y))
    return out.to(dtype)


SPECIAL: dict[torch._ops.OpOverload, Callable] = {
    aten.digamma.default: digamma,
    aten.polygamma.default: polygamma,
    aten.lgamma.default: lgamma,
    aten.erfc.default: erfc,
    aten.erfinv.default: erfinv,
    aten.special_entr.default: entr,
    aten.special_xlog1py.default: xlog1py,
}
