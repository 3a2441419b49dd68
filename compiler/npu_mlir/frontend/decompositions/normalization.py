"""Layer norm and group norm backwards as the eager path traces them: a tensor for every gradient.

Autograd asks these ops only for the gradients of inputs that need one (output_mask), and torch's
decompositions return None for the others. A kernel cannot return an undefined tensor, so the
rewrites return zeros for those (a fill, never computed), which csrc/aten/NormOps.cpp hands back as
undefined, as the CPU's kernels return them: a frozen LayerNorm, one without affine parameters, or
one whose input needs no gradient (the first norm after an embedding that is not trained). A weight /
bias gradient asked of a call without that parameter (the CPU raises; autograd never asks) is that
of an implicit weight of ones / bias of zeros. Imported by kernel_build through retrace.py (no
torch_npu import).
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch
from torch._decomp import decompositions as torch_decompositions

aten = torch.ops.aten


def _zeros_where_masked(grads: Sequence[torch.Tensor | None], like: Sequence[torch.Tensor],
                        output_mask: list[bool]) -> tuple[torch.Tensor, ...]:
    return tuple(g if wanted and g is not None else torch.zeros_like(t)
                 for g, t, wanted in zip(grads, like, output_mask))


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
    grads = torch_decompositions.native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight,
                                                            bias, output_mask)
    return _zeros_where_masked(grads, (input, weight, bias), output_mask)


def native_group_norm_backward(grad_output: torch.Tensor, input: torch.Tensor, mean: torch.Tensor,
                               rstd: torch.Tensor, gamma: torch.Tensor | None, N: int, C: int, HxW: int, group: int,
                               output_mask: list[bool]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    # Without gamma torch's decomposition already uses ones; it returns d_gamma / d_bias when asked.
    grads = torch_decompositions.native_group_norm_backward(grad_output, input, mean, rstd, gamma, N, C, HxW, group,
                                                            output_mask)
    param = gamma if gamma is not None else input.new_empty((C,))
    return _zeros_where_masked(grads, (input, param, param), output_mask)


RETRACED: dict[torch._ops.OpOverload, Callable] = {
    aten.native_layer_norm_backward.default: native_layer_norm_backward,
    aten.native_group_norm_backward.default: native_group_norm_backward,
}
