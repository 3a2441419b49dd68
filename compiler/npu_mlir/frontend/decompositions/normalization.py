"""Layer norm and group norm backwards as the eager path traces them: every gradient, whatever output_mask says.

Autograd asks these ops only for the gradients of inputs that need one (output_mask), and torch's
decompositions return None for the others (and for the weight / bias of a call without them). A
kernel cannot return an undefined tensor, so such calls fell back to the CPU: a frozen LayerNorm, one
without affine parameters, or one whose input needs no gradient (the first norm after an embedding
that is not trained). The rewrites compute all three, those of an absent weight / bias as the
gradients of an implicit weight of ones / bias of zeros; autograd drops the gradients of inputs that
need none, as it does for native_batch_norm_backward (batch_norm.py). Imported by kernel_build
through retrace.py (no torch_npu import).
"""

from __future__ import annotations

from typing import Callable

import torch
from torch._decomp import decompositions as torch_decompositions

aten = torch.ops.aten
EVERY_GRADIENT = [True, True, True]


def native_layer_norm_backward(grad_out: torch.Tensor, input: torch.Tensor, normalized_shape: list[int],
                               mean: torch.Tensor, rstd: torch.Tensor, weight: torch.Tensor | None,
                               bias: torch.Tensor | None,
                               output_mask: list[bool]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    # A weight of ones computes the same input gradient as none (grad_out * 1); the parameter
    # gradients then take the input's dtype, as the CPU's of an affine layer norm in that dtype do.
    if weight is None:
        weight = torch.ones(normalized_shape, dtype=input.dtype, device=input.device)
    if bias is None:
        bias = torch.zeros(normalized_shape, dtype=input.dtype, device=input.device)
    return torch_decompositions.native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight,
                                                           bias, EVERY_GRADIENT)


def native_group_norm_backward(grad_output: torch.Tensor, input: torch.Tensor, mean: torch.Tensor,
                               rstd: torch.Tensor, gamma: torch.Tensor | None, N: int, C: int, HxW: int, group: int,
                               output_mask: list[bool]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    # Without gamma torch's decomposition already uses ones; it returns d_gamma / d_bias when asked.
    return torch_decompositions.native_group_norm_backward(grad_output, input, mean, rstd, gamma, N, C, HxW, group,
                                                           EVERY_GRADIENT)


RETRACED: dict[torch._ops.OpOverload, Callable] = {
    aten.native_layer_norm_backward.default: native_layer_norm_backward,
    aten.native_group_norm_backward.default: native_group_norm_backward,
}
