"""Pooling rewrites: scatter-free backwards, and forwards of unbatched inputs.

torch-mlir lowers the pooling forwards of batched inputs only: an unbatched (C, *spatial) input
is given a batch of one.

PyTorch's decompositions scatter the output gradient back onto the input (`tm_tensor.scatter`,
which the Ascend pipeline cannot lower). Here each kernel offset o contributes one plane: the
output gradient where that offset is the one that counts (max: the saved index is the input
position the offset reads; avg: every offset in the input, divided by the window's divisor), and
the plane lands on the input at out * stride + o * dilation - padding - zeros inserted between
its elements, padded or cropped (conv_gemm's helpers). The planes sum: overlapping windows add up
as the CPU kernels' scatter-add does. Any kernel / stride / padding / dilation / ceil_mode, 1-3
spatial dims. Adaptive pools have a window per output that varies in size: their average's
backward is one small matmul per spatial dim with the (out, in) window-membership matrix divided
by the window size; their max's is a comparison of every input position with the saved indices,
summed over the outputs (quadratic in the plane, which adaptive pools keep small).
Imported by retrace (compile workers too: no torch_npu import).
"""

from __future__ import annotations

import itertools
from typing import Callable

import torch

from npu_mlir.frontend.decompositions.conv_gemm import dilate_trailing, pad_trailing


def _window_positions(out: list[int], offset: tuple[int, ...], stride: list[int], padding: list[int],
                      dilation: list[int], device: torch.device) -> list[torch.Tensor]:
    """Input position read by `offset` at each output position, one tensor per dim shaped for broadcasting."""
    spatial = len(out)
    positions = []
    for axis, (size, o, s, p, d) in enumerate(zip(out, offset, stride, padding, dilation)):
        shape = [1] * spatial
        shape[axis] = size
        positions.append((torch.arange(size, device=device) * s + (o * d - p)).view(shape))
    return positions


def _place(plane: torch.Tensor, offset: tuple[int, ...], stride: list[int], padding: list[int],
           dilation: list[int], spatial_sizes: list[int]) -> torch.Tensor:
    """plane (N, C, *out) moved to the input positions its offset reads, zeros elsewhere."""
    out = list(plane.shape[-len(offset):])
    low = [o * d - p for o, d, p in zip(offset, dilation, padding)]
    high = [size - lo - (n - 1) * s - 1 for size, lo, n, s in zip(spatial_sizes, low, out, stride)]
    return pad_trailing(dilate_trailing(plane, stride), low, high)


def _expand(values: list[int], spatial: int, default: list[int] | None = None) -> list[int]:
    values = list(values) or list(default or [])
    return values * spatial if len(values) == 1 else values


def max_pool_with_indices_backward(spatial: int, grad_output: torch.Tensor, self: torch.Tensor,
                                   kernel_size: list[int], stride: list[int], padding: list[int],
                                   dilation: list[int], ceil_mode: bool, indices: torch.Tensor) -> torch.Tensor:
    kernel = _expand(kernel_size, spatial)
    stride, padding, dilation = _expand(stride, spatial, kernel), _expand(padding, spatial), _expand(dilation, spatial)
    sizes = list(self.shape[-spatial:])
    out = list(grad_output.shape[-spatial:])
    # (N*C or C, *out): unbatched inputs too. Half precision accumulates in float32.
    batched = grad_output.reshape(-1, *out)
    batched = batched.float() if batched.dtype in (torch.float16, torch.bfloat16) else batched
    saved = indices.reshape(batched.shape)
    grad = None
    for offset in itertools.product(*(range(k) for k in kernel)):
        # The flat input position the offset reads, -1 where it reads padding. Integer arithmetic, not
        # a conjunction of broadcast booleans: the sim target miscompiled the latter for 3-d pools.
        flat, inside = None, None
        for axis, position in enumerate(_window_positions(out, offset, stride, padding, dilation, self.device)):
            ok = ((position >= 0) & (position < sizes[axis])).to(torch.int64)
            flat = position if flat is None else flat * sizes[axis] + position
            inside = ok if inside is None else inside * ok
        plane = torch.where(saved == flat * inside + (inside - 1), batched, 0.0)
        placed = _place(plane, offset, stride, padding, dilation, sizes)
        grad = placed if grad is None else grad + placed
    return grad.reshape(self.shape).to(self.dtype)


def _divisors(out: list[int], sizes: list[int], kernel: list[int], stride: list[int], padding: list[int],
              count_include_pad: bool, divisor_override: int | None, device: torch.device) -> torch.Tensor:
    """The CPU kernel's divisor of each output window."""
    if divisor_override:
        return torch.full([1] * len(out), float(divisor_override), device=device)
    divisor = None
    for axis, (n, size, k, s, p) in enumerate(zip(out, sizes, kernel, stride, padding)):
        shape = [1] * len(out)
        shape[axis] = n
        start = torch.arange(n, device=device) * s - p
        end = torch.clamp(start + k, max=size + p)
        if not count_include_pad:
            extent = torch.clamp(end, max=size) - torch.clamp(start, min=0)
        else:
            extent = end - start
        extent = extent.view(shape)
        divisor = extent if divisor is None else divisor * extent
    return divisor.to(torch.float32)


def avg_pool_backward(spatial: int, grad_output: torch.Tensor, self: torch.Tensor, kernel_size: list[int],
                      stride: list[int], padding: list[int], ceil_mode: bool, count_include_pad: bool,
                      divisor_override: int | None = None) -> torch.Tensor:
    kernel = _expand(kernel_size, spatial)
    stride, padding = _expand(stride, spatial, kernel), _expand(padding, spatial)
    sizes, out = list(self.shape[-spatial:]), list(grad_output.shape[-spatial:])
    ones = [1] * spatial
    divisor = _divisors(out, sizes, kernel, stride, padding, count_include_pad, divisor_override, self.device)
    scale = grad_output.dtype if grad_output.dtype == torch.float64 else torch.float32
    batched = (grad_output.to(scale) / divisor.to(scale)).reshape(-1, *out)
    grad = None
    for offset in itertools.product(*(range(k) for k in kernel)):
        placed = _place(batched, offset, stride, padding, ones, sizes)
        grad = placed if grad is None else grad + placed
    return grad.reshape(self.shape).to(self.dtype)


def _windows(size: int, out: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """(out, size): 1 / window size where input i is in adaptive window o, else 0."""
    o = torch.arange(out, device=device).view(out, 1)
    start, end = (o * size) // out, ((o + 1) * size + out - 1) // out
    i = torch.arange(size, device=device).view(1, size)
    return ((i >= start) & (i < end)).to(dtype) / (end - start).to(dtype)


def adaptive_avg_pool_backward(spatial: int, grad_output: torch.Tensor, self: torch.Tensor) -> torch.Tensor:
    grad = grad_output.float() if grad_output.dtype in (torch.float16, torch.bfloat16) else grad_output
    for axis in range(spatial):
        dim = grad.dim() - spatial + axis
        matrix = _windows(self.shape[dim], grad.shape[dim], grad.dtype, self.device)
        grad = (grad.transpose(dim, -1) @ matrix).transpose(dim, -1)
    return grad.to(self.dtype)


def adaptive_max_pool_backward(spatial: int, grad_output: torch.Tensor, self: torch.Tensor,
                               indices: torch.Tensor) -> torch.Tensor:
    plane = 1
    for size in self.shape[-spatial:]:
        plane *= size
    grads = grad_output.reshape(-1, 1, grad_output.shape[-spatial:].numel())
    grads = grads.float() if grads.dtype in (torch.float16, torch.bfloat16) else grads
    saved = indices.reshape(grads.shape)
    positions = torch.arange(plane, device=self.device).view(1, plane, 1)
    grad = torch.where(saved == positions, grads, 0.0).sum(-1)
    return grad.reshape(self.shape).to(self.dtype)


def _spatial(rewrite: Callable, spatial: int) -> Callable:
    return lambda *args: rewrite(spatial, *args)


def _batched(op: torch._ops.OpOverload, spatial: int) -> Callable:
    def rewrite(self: torch.Tensor, *args):
        if self.dim() > spatial + 1:
            return op(self, *args)
        out = op(self.unsqueeze(0), *args)
        return tuple(o.squeeze(0) for o in out) if isinstance(out, tuple) else out.squeeze(0)

    return rewrite


aten = torch.ops.aten
FORWARDS = {aten.max_pool2d_with_indices.default: 2, aten.avg_pool2d.default: 2, aten._adaptive_avg_pool2d.default: 2,
            aten.adaptive_max_pool2d.default: 2, aten.max_pool3d_with_indices.default: 3, aten.avg_pool3d.default: 3,
            aten._adaptive_avg_pool3d.default: 3, aten.adaptive_max_pool3d.default: 3}
RETRACED: dict[torch._ops.OpOverload, Callable] = {
    **{op: _batched(op, spatial) for op, spatial in FORWARDS.items()},
    aten.max_pool2d_with_indices_backward.default: _spatial(max_pool_with_indices_backward, 2),
    aten.max_pool3d_with_indices_backward.default: _spatial(max_pool_with_indices_backward, 3),
    aten.avg_pool2d_backward.default: _spatial(avg_pool_backward, 2),
    aten.avg_pool3d_backward.default: _spatial(avg_pool_backward, 3),
    aten._adaptive_avg_pool2d_backward.default: _spatial(adaptive_avg_pool_backward, 2),
    aten._adaptive_avg_pool3d_backward.default: _spatial(adaptive_avg_pool_backward, 3),
    aten.adaptive_max_pool2d_backward.default: _spatial(adaptive_max_pool_backward, 2),
    aten.adaptive_max_pool3d_backward.default: _spatial(adaptive_max_pool_backward, 3),
}
