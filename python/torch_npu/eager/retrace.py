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


def _non_overlapping(kernel: list[int], stride: list[int], padding: list[int], ceil_mode: bool) -> int:
    """The window size k when 2-d pooling windows tile the input exactly (stride == kernel, no padding)."""
    stride = list(stride) or list(kernel)
    if len(set(kernel)) != 1 or list(stride) != list(kernel) or any(padding) or ceil_mode:
        raise NotImplementedError("only non-overlapping square pooling windows are retraced")
    return kernel[0]


def _spread(grad: torch.Tensor, k: int, height: int, width: int) -> torch.Tensor:
    """Each pooled value repeated over its k x k window, zero padded to height x width."""
    n, c, h, w = grad.shape
    spread = grad.reshape(n, c, h, 1, w, 1).expand(n, c, h, k, w, k).reshape(n, c, h * k, w * k)
    return torch.nn.functional.pad(spread, (0, width - w * k, 0, height - h * k))


def avg_pool2d_backward(grad_output: torch.Tensor, self: torch.Tensor, kernel_size: list[int], stride: list[int],
                        padding: list[int], ceil_mode: bool, count_include_pad: bool,
                        divisor_override: int | None) -> torch.Tensor:
    k = _non_overlapping(kernel_size, stride, padding, ceil_mode)
    return _spread(grad_output / (divisor_override or k * k), k, self.shape[-2], self.shape[-1])


def max_pool2d_with_indices_backward(grad_output: torch.Tensor, self: torch.Tensor, kernel_size: list[int],
                                     stride: list[int], padding: list[int], dilation: list[int], ceil_mode: bool,
                                     indices: torch.Tensor) -> torch.Tensor:
    k = _non_overlapping(kernel_size, stride, padding, ceil_mode)
    if any(d != 1 for d in dilation):
        raise NotImplementedError("only undilated max pooling is retraced")
    height, width = self.shape[-2], self.shape[-1]
    position = torch.arange(height * width, device=self.device).view(height, width)
    # The window's argmax, spread over the window (-1 in the uncovered border never matches).
    argmax = _spread(indices + 1, k, height, width) - 1
    return torch.where(argmax == position, _spread(grad_output, k, height, width), 0.0)


def convolution_backward(grad_output: torch.Tensor, input: torch.Tensor, weight: torch.Tensor,
                         bias_sizes: list[int] | None, stride: list[int], padding: list[int], dilation: list[int],
                         transposed: bool, output_padding: list[int], groups: int,
                         output_mask: list[bool]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if transposed or groups != 1 or any(s != 1 for s in stride) or any(d != 1 for d in dilation) or input.dim() != 4:
        raise NotImplementedError("only 2-d convolutions with stride 1, dilation 1 and one group are retraced")
    conv = torch.ops.aten.convolution.default
    kh, kw = weight.shape[-2:]
    # All three gradients, whatever output_mask says: a kernel cannot return an undefined tensor, and
    # autograd ignores the gradients of inputs that do not require one.
    flipped = weight.flip(-2, -1).transpose(0, 1)  # a full correlation with the flipped, channel-swapped kernel
    grad_input = conv(grad_output, flipped, None, [1, 1], [kh - 1 - padding[0], kw - 1 - padding[1]], [1, 1],
                      False, [0, 0], 1)
    # The batch becomes the reduction: correlate input channels with output channels.
    grad_weight = conv(input.transpose(0, 1), grad_output.transpose(0, 1), None, [1, 1], list(padding), [1, 1],
                       False, [0, 0], 1).transpose(0, 1)
    return grad_input, grad_weight, grad_output.sum((0, 2, 3))


def convolution(input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, stride: list[int],
                padding: list[int], dilation: list[int], transposed: bool, output_padding: list[int],
                groups: int) -> torch.Tensor:
    # torch-mlir's transposed convolution gives wrong numbers on the sim target (op_db conv_transpose1d).
    if transposed:
        raise NotImplementedError("transposed convolutions run on the CPU fallback")
    return aten.convolution.default(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                                    groups)


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
    aten.avg_pool2d_backward.default: avg_pool2d_backward,
    aten.max_pool2d_with_indices_backward.default: max_pool2d_with_indices_backward,
    aten.convolution_backward.default: convolution_backward,
    aten.convolution.default: convolution,
}
