"""Sums of float16 / bfloat16 tensors accumulate in float32, as torch's CPU and CUDA kernels do.

torch-mlir keeps a half-precision sum's accumulator in the input dtype, and the sim rounds it after
every add: a bf16 sum of 1000 ones gave 972, an f16 sum of 70001 ones 2048 (torch: inf), and a mean
over more than 65504 f16 elements 0 (its divisor rounds to inf in f16). Each rewrite reduces the
input widened to float32 and rounds the result once, to the dtype torch returns. The widening is
the reduction's prologue: it fuses, and no f32 copy of the input is stored.
"""

from __future__ import annotations

from typing import Callable

import torch

from npu_mlir.frontend.decompositions.precision import HALF

aten = torch.ops.aten


def _in_float(op: torch._ops.OpOverload) -> Callable:
    def rewrite(self: torch.Tensor, *args: object, **kwargs: object) -> torch.Tensor:
        if self.dtype not in HALF:
            return op(self, *args, **kwargs)
        result = kwargs.pop("dtype", None) or self.dtype
        return op(self.float(), *args, **kwargs).to(result)

    return rewrite


HALF_REDUCTIONS: dict[torch._ops.OpOverload, Callable] = {
    op: _in_float(op) for op in (aten.sum.default, aten.sum.dim_IntList, aten.mean.default, aten.mean.dim,
                                 aten.nansum.default, aten.nanmean.default, aten.logsumexp.default,
                                 aten.linalg_vector_norm.default, aten.norm.ScalarOpt_dim, aten.prod.default,
                                 aten.trace.default)
}
