"""Ops the eager path traces through a decomposition of ours instead of torch-mlir's own lowering.

torch-mlir lowers these ops to something the sim target miscompiles (nll_loss_forward: rows past
the sixth read as zero), to `tm_tensor.scatter`, which the Ascend pipeline has no lowering for
(nll_loss_backward, embedding_dense_backward, the pooling and convolution backwards in PyTorch's
decompositions), or not at all (argmax/argmin of a 0-d tensor). Each rewrite below is scatter-free:
a one-hot comparison against the index, elementwise ops, reductions, matmuls or forward
convolutions, all of which the pipeline compiles. A configuration a rewrite does not cover raises,
so that call runs on the CPU fallback. Imported by kernel_build, in the user's process and in
compile workers alike (no torch_npu import).
"""

from __future__ import annotations

from typing import Callable

import torch

aten = torch.ops.aten
REDUCTION_NONE, REDUCTION_MEAN = 0, 1


def _one_hot(target: torch.Tensor, classes: int, dim: int, ndim: int, dtype: torch.dtype) -> torch.Tensor:
    """1.0 where the class index along `dim` equals the target, 0.0 elsewhere (ignored targets are -1)."""
    shape = [1] * ndim
    shape[dim] = classes
    index = torch.arange(classes, device=target.device).view(shape)
    return (target.unsqueeze(dim) == index).to(dtype)


def nll_loss_forward(self: torch.Tensor, target: torch.Tensor, weight: torch.Tensor | None, reduction: int,
                     ignore_index: int) -> tuple[torch.Tensor, torch.Tensor]:
    dim = 1 if self.dim() >= 2 else 0
    valid = target != ignore_index
    picked = _one_hot(torch.where(valid, target, -1), self.shape[dim], dim, self.dim(), self.dtype)
    if weight is not None:
        shape = [1] * self.dim()
        shape[dim] = self.shape[dim]
        picked = picked * weight.view(shape)
    losses = -(self * picked).sum(dim)
    weights = picked.sum(dim)
    if reduction == REDUCTION_NONE:
        return losses, self.new_zeros(())
    total = weights.sum()
    if reduction == REDUCTION_MEAN:
        return losses.sum() / total, total
    return losses.sum(), total


def nll_loss_backward(grad_output: torch.Tensor, self: torch.Tensor, target: torch.Tensor,
                      weight: torch.Tensor | None, reduction: int, ignore_index: int,
                      total_weight: torch.Tensor) -> torch.Tensor:
    dim = 1 if self.dim() >= 2 else 0
    valid = target != ignore_index
    picked = _one_hot(torch.where(valid, target, -1), self.shape[dim], dim, self.dim(), self.dtype)
    if weight is not None:
        shape = [1] * self.dim()
        shape[dim] = self.shape[dim]
        picked = picked * weight.view(shape)
    if reduction == REDUCTION_NONE:
        return -picked * grad_output.unsqueeze(dim)
    if reduction == REDUCTION_MEAN:
        return -picked * (grad_output / total_weight)
    return -picked * grad_output


def embedding_dense_backward(grad_output: torch.Tensor, indices: torch.Tensor, num_weights: int,
                             padding_idx: int, scale_grad_by_freq: bool) -> torch.Tensor:
    rows = indices.reshape(-1)
    if padding_idx >= 0:
        rows = torch.where(rows == padding_idx, -1, rows)
    one_hot = _one_hot(rows, num_weights, 1, 2, grad_output.dtype)  # (positions, num_weights)
    grads = grad_output.reshape(rows.shape[0], -1)
    if scale_grad_by_freq:
        counts = one_hot.sum(0).clamp(min=1)
        one_hot = one_hot / counts
    return one_hot.t() @ grads


def _arg_extreme(op: torch._ops.OpOverload) -> Callable:
    # torch-mlir cannot lower argmax/argmin of a 0-d tensor (a `torch.constant.bool` survives);
    # its answer is the index into the one-element vector.
    def rewrite(self: torch.Tensor, dim: int | None = None, keepdim: bool = False) -> torch.Tensor:
        if self.dim() == 0:
            return op(self.reshape(1), 0)
        return op(self, dim, keepdim)

    return rewrite


RETRACED: dict[torch._ops.OpOverload, Callable] = {
    aten.argmax.default: _arg_extreme(aten.argmax.default),
    aten.argmin.default: _arg_extreme(aten.argmin.default),
    aten.nll_loss_forward.default: nll_loss_forward,
    aten.nll_loss_backward.default: nll_loss_backward,
    aten.embedding_dense_backward.default: embedding_dense_backward,
}

# Convolutions as GEMMs and scatter-free pooling backwards: every stride / padding / dilation / groups.
if __package__:
    from torch_npu.eager.conv_gemm import RETRACED as _CONVOLUTION
    from torch_npu.eager.pooling import RETRACED as _POOLING
else:
    from conv_gemm import RETRACED as _CONVOLUTION
    from pooling import RETRACED as _POOLING
RETRACED.update(_CONVOLUTION)
RETRACED.update(_POOLING)
