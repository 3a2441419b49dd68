"""Integer ops that torch-mlir lowers through float, computed in integers as torch does.

torch-mlir negates an integer tensor through float, fptosi(-sitofp(x)) in f32 whatever the integer
width: -(2^31 - 1) gave -2^31 and -(2^53 + 1) gave -2^53. Negation is 0 - x in the tensor's own dtype,
wrapping at the minimum as torch's does. Imported by retrace.py.
"""

from __future__ import annotations

import torch

aten = torch.ops.aten


def neg(self: torch.Tensor) -> torch.Tensor:
    if self.dtype.is_floating_point or self.dtype.is_complex or self.dtype == torch.bool:
        return aten.neg.default(self)
    return aten.sub.Tensor(torch.zeros_like(self), self)


INTEGER: dict[torch._ops.OpOverload, object] = {aten.neg.default: neg}
