"""addcdiv / addcmul with `value` as a kernel parameter instead of a constant compiled in.

AdamW (and Adam) call addcdiv with value = -lr / (1 - beta1**step): a new number every step. A
Scalar argument with no Tensor-taking sibling overload is baked into the kernel and its cache key,
so every optimizer step recompiled one kernel per parameter shape (ResNet-18: 17 compiles, ~4.7 s
of a ~4.8 s steady step). These rewrites take `value` as a 0-d tensor (plan.PARAMETER_RETRACES)
and compute as the CPU kernels do: self + value * t1 / t2 left to right (addcmul: fma(value * t1,
t2, self) in float32), in float32 for half-precision tensors, the scalar first rounded to that
compute type. Imported by
retrace (compile workers too: no torch_npu import).
"""

from __future__ import annotations

from typing import Callable

import torch

from npu_mlir.frontend.decompositions.precision import HALF

aten = torch.ops.aten


def _compute_type(self: torch.Tensor) -> torch.dtype:
    return torch.float32 if self.dtype in HALF else self.dtype


def _scalar(value: torch.Tensor | float, compute: torch.dtype) -> torch.Tensor | float:
    # A number when the plan checks the call before making `value` a parameter.
    return value.to(compute) if isinstance(value, torch.Tensor) else value


def addcdiv(self: torch.Tensor, tensor1: torch.Tensor, tensor2: torch.Tensor,
            value: torch.Tensor | float) -> torch.Tensor:
    dtype = torch.result_type(self, tensor1)
    compute = _compute_type(self)
    out = self.to(compute) + _scalar(value, compute) * tensor1.to(compute) / tensor2.to(compute)
    return out.to(dtype)


def addcmul(self: torch.Tensor, tensor1: torch.Tensor, tensor2: torch.Tensor,
            value: torch.Tensor | float) -> torch.Tensor:
    dtype = torch.result_type(self, tensor1)
    compute = _compute_type(self)
    scaled = _scalar(value, compute) * tensor1.to(compute)
    if self.dtype == torch.float32:
        # The CPU kernel fuses the last multiply-add (fma(value * t1, t2, self)): float32 products are
        # exact in float64, so one float64 multiply-add rounds as the fma does.
        return (scaled.double() * tensor2.double() + self.double()).to(dtype)
    return (self.to(compute) + scaled * tensor2.to(compute)).to(dtype)


RETRACED: dict[torch._ops.OpOverload, Callable] = {aten.addcdiv.default: addcdiv, aten.addcmul.default: addcmul}
