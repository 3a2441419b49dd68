"""pow with the exponents torch's CPU kernel computes another way, so the special values agree.

torch's pow_tensor_scalar kernel takes sqrt for x ** 0.5, rsqrt for x ** -0.5 and a reciprocal for
x ** -1; libm's powf differs at the edges: powf(-inf, 0.5) is inf where sqrt gives nan, powf(-0, 0.5)
+0 where sqrt keeps -0, powf(-0, -0.5) +inf where rsqrt gives -inf. The exponent reaches the
compiler as a constant (eager/plan.py SPECIALIZED_NUMBERS), so the rewrite sees it. Imported by
retrace.py.
"""

from __future__ import annotations

import torch

aten = torch.ops.aten
_AS = {0.5: torch.sqrt, -0.5: torch.rsqrt, -1.0: torch.reciprocal}


def pow_tensor_scalar(self: torch.Tensor, exponent: float) -> torch.Tensor:
    if self.dtype.is_floating_point and not isinstance(exponent, bool) and float(exponent) in _AS:
        return _AS[float(exponent)](self)
    return aten.pow.Tensor_Scalar(self, exponent)


POWERS: dict[torch._ops.OpOverload, object] = {aten.pow.Tensor_Scalar: pow_tensor_scalar}
