"""pow with the exponents torch's CPU kernel computes another way, so the special values agree.

torch's pow_tensor_scalar kernel takes sqrt for x ** 0.5, rsqrt for x ** -0.5 and a reciprocal for
x ** -1; libm's powf differs at the edges: powf(-inf, 0.5) is inf where sqrt gives nan, powf(-0, 0.5)
+0 where sqrt keeps -0, powf(-0, -0.5) +inf where rsqrt gives -inf. For 2, 3 and -2 it multiplies
(x * x, x * x * x, 1 / (x * x)), which is also what keeps the kernel a split elementwise one:
torch-mlir's math.fpowi / math.powf leave it an opaque one-block kernel (GPT-2's gelu_new
x ** 3.0 on 2x64x512: 0.46 ms a call). float16 multiplies in float32 and rounds once, as the CPU's
powf does; bfloat16 products are rounded once too (the sim keeps them in float32) where the CPU rounds
each: x ** 3 and x ** -2 can be one bfloat16 ulp apart, as through fpowi. The exponent reaches the
compiler as a constant (eager/plan.py SPECIALIZED_NUMBERS), so the rewrite sees it. An integer
tensor to a non-negative integer power (torch-mlir: "unimplemented: non-floating point dtype") is
computed by squaring in its dtype. Imported by retrace.py.
"""

from __future__ import annotations

import torch

aten = torch.ops.aten
_AS = {0.5: torch.sqrt, -0.5: torch.rsqrt, -1.0: torch.reciprocal}
_PRODUCTS = (2.0, 3.0, -2.0)


def _product(x: torch.Tensor, exponent: float) -> torch.Tensor:
    wide = x.float() if x.dtype == torch.float16 else x
    square = wide * wide
    power = square * wide if exponent == 3.0 else square if exponent == 2.0 else 1 / square
    return power.to(x.dtype)


def _integer_power(x: torch.Tensor, exponent: int) -> torch.Tensor:
    """x ** exponent by squaring in x's dtype, wrapping as torch's integer pow does."""
    power, square = torch.ones_like(x), x
    while exponent:
        if exponent & 1:
            power = power * square
        exponent >>= 1
        if exponent:
            square = square * square
    return power


def pow_tensor_scalar(self: torch.Tensor, exponent: float) -> torch.Tensor:
    integral = not self.dtype.is_floating_point and not self.dtype.is_complex and self.dtype != torch.bool
    if integral and type(exponent) is int and exponent >= 0:
        return _integer_power(self, exponent)
    if not self.dtype.is_floating_point or isinstance(exponent, bool) or isinstance(exponent, complex):
        return aten.pow.Tensor_Scalar(self, exponent)
    if float(exponent) in _AS:
        return _AS[float(exponent)](self)
    if float(exponent) in _PRODUCTS:
        return _product(self, float(exponent))
    return aten.pow.Tensor_Scalar(self, exponent)


POWERS: dict[torch._ops.OpOverload, object] = {aten.pow.Tensor_Scalar: pow_tensor_scalar}
