"""Batch norm as the eager path traces it: scatter-free, with momentum and eps as kernel parameters.

torch-mlir's own lowering of native_batch_norm ignores the running statistics in training (the
update is a side effect its schema does not state) and cannot import eval mode (its (0,)-shaped
save_mean / save_invstd become a `tensor.cast` from tensor<C> to tensor<0>). The plan (plan.py)
therefore compiles a training call with running statistics as `_native_batch_norm_legit_functional`,
whose two extra results are the new running_mean / running_var that the dispatcher writes into the
caller's tensors, and everything else as native_batch_norm; both trace through the functions below,
as does native_batch_norm_backward (torch's decomposition returns None for a masked-off gradient,
which no kernel can, so affine-off models fell back).

Numbers follow the CPU kernel: statistics in float32 for float16/bfloat16 inputs, biased variance for
normalizing, unbiased for the running update, save_mean / save_invstd in the dtype of the running
statistics (of the input when there are none), empty (0,) ones in eval mode. `momentum` and `eps`
arrive as 0-d tensors (plan.PARAMETER_RETRACES), so momentum=None's cumulative average 1/n does not
compile a kernel per step. Imported by kernel_build through retrace.py (no torch_npu import).
"""

from __future__ import annotations

from typing import Callable

import torch

aten = torch.ops.aten
Number = float | torch.Tensor


def _opmath(dtype: torch.dtype) -> torch.dtype:
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def _per_channel(t: torch.Tensor, ndim: int) -> torch.Tensor:
    """A (C,) tensor shaped to broadcast against (N, C, *spatial)."""
    return t.reshape([1, -1] + [1] * (ndim - 2))


def _affine(input: torch.Tensor, mean: torch.Tensor, invstd: torch.Tensor, weight: torch.Tensor | None,
            bias: torch.Tensor | None) -> torch.Tensor:
    n = input.dim()
    x = input.to(_opmath(input.dtype))
    y = (x - _per_channel(mean, n)) * _per_channel(invstd, n)
    if weight is not None:
        y = y * _per_channel(weight.to(y.dtype), n)
    if bias is not None:
        y = y + _per_channel(bias.to(y.dtype), n)
    return y.to(input.dtype)


def _batch_statistics(input: torch.Tensor, eps: Number) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(mean, biased variance, 1/sqrt(var + eps)) over every dim but the channels, in opmath."""
    dims = [0] + list(range(2, input.dim()))
    var, mean = torch.var_mean(input.to(_opmath(input.dtype)), dims, correction=0)
    return mean, var, torch.rsqrt(var + eps)


def _train(input: torch.Tensor, weight: torch.Tensor | None, bias: torch.Tensor | None,
           running_mean: torch.Tensor | None, running_var: torch.Tensor | None, momentum: Number, eps: Number
           ) -> tuple[torch.Tensor, ...]:
    mean, var, invstd = _batch_statistics(input, eps)
    output = _affine(input, mean, invstd, weight, bias)
    stats_dtype = running_mean.dtype if running_mean is not None else input.dtype
    result = (output, mean.to(stats_dtype), invstd.to(stats_dtype))
    if running_mean is None or running_var is None:
        return result
    count = input.numel() // input.shape[1]
    unbiased = var * (count / max(count - 1, 1))
    new_mean = (1 - momentum) * running_mean.to(mean.dtype) + momentum * mean
    new_var = (1 - momentum) * running_var.to(var.dtype) + momentum * unbiased
    return result + (new_mean.to(running_mean.dtype), new_var.to(running_var.dtype))


def _evaluate(input: torch.Tensor, weight: torch.Tensor | None, bias: torch.Tensor | None,
              running_mean: torch.Tensor, running_var: torch.Tensor, eps: Number) -> tuple[torch.Tensor, ...]:
    opmath = _opmath(input.dtype)
    invstd = torch.rsqrt(running_var.to(opmath) + eps)
    output = _affine(input, running_mean.to(opmath), invstd, weight, bias)
    empty = input.new_zeros((0,), dtype=running_mean.dtype)
    return output, empty, empty.clone()


def native_batch_norm(input: torch.Tensor, weight: torch.Tensor | None, bias: torch.Tensor | None,
                      running_mean: torch.Tensor | None, running_var: torch.Tensor | None, training: bool,
                      momentum: Number, eps: Number) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The calls that write nothing: eval mode, or training without running statistics."""
    if training:
        if running_mean is not None or running_var is not None:
            raise NotImplementedError("a training call with running statistics compiles as "
                                      "_native_batch_norm_legit_functional (it writes them)")
        return _train(input, weight, bias, None, None, momentum, eps)
    if running_mean is None or running_var is None:
        raise ValueError("native_batch_norm in eval mode needs running_mean and running_var")
    return _evaluate(input, weight, bias, running_mean, running_var, eps)


def native_batch_norm_legit_functional(input: torch.Tensor, weight: torch.Tensor | None, bias: torch.Tensor | None,
                                       running_mean: torch.Tensor, running_var: torch.Tensor, training: bool,
                                       momentum: Number, eps: Number) -> tuple[torch.Tensor, ...]:
    """(output, save_mean, save_invstd, new running_mean, new running_var)."""
    if training:
        return _train(input, weight, bias, running_mean, running_var, momentum, eps)
    # Eval mode writes the statistics back unchanged; the copies keep them distinct results.
    return _evaluate(input, weight, bias, running_mean, running_var, eps) + (running_mean.clone(),
                                                                             running_var.clone())


def native_batch_norm_backward(grad_out: torch.Tensor, input: torch.Tensor, weight: torch.Tensor | None,
                               running_mean: torch.Tensor | None, running_var: torch.Tensor | None,
                               save_mean: torch.Tensor | None, save_invstd: torch.Tensor | None, train: bool,
                               eps: Number, output_mask: list[bool]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(grad_input, grad_weight, grad_bias): a kernel cannot return an undefined tensor, so those
    output_mask leaves out are zeros (a fill), which csrc/aten/NormOps.cpp returns undefined, as the CPU does."""
    opmath = _opmath(input.dtype)
    n = input.dim()
    dims = [0] + list(range(2, n))
    if train:
        mean, invstd = save_mean.to(opmath), save_invstd.to(opmath)
    else:
        mean, invstd = running_mean.to(opmath), torch.rsqrt(running_var.to(opmath) + eps)
    x, dy = input.to(opmath), grad_out.to(opmath)
    xhat = (x - _per_channel(mean, n)) * _per_channel(invstd, n)
    grad_bias = dy.sum(dims)
    grad_weight = (dy * xhat).sum(dims)
    scale = invstd * weight.to(opmath) if weight is not None else invstd
    if train:
        count = input.numel() // input.shape[1]
        dy = dy - _per_channel(grad_bias / count, n) - xhat * _per_channel(grad_weight / count, n)
    grad_input = dy * _per_channel(scale, n)
    param_dtype = weight.dtype if weight is not None else input.dtype
    grads = (grad_input.to(input.dtype), grad_weight.to(param_dtype), grad_bias.to(param_dtype))
    return tuple(g if wanted else torch.zeros_like(g) for g, wanted in zip(grads, output_mask))


RETRACED: dict[torch._ops.OpOverload, Callable] = {
    aten.native_batch_norm.default: native_batch_norm,
    aten._native_batch_norm_legit_functional.default: native_batch_norm_legit_functional,
    aten.native_batch_norm_backward.default: native_batch_norm_backward,
}
