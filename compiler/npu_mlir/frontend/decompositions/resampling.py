"""Upsampling, replication padding and unfold as linear maps along each resampled dim, with their backwards.

Each of these ops is, along every spatial dim it resamples, a fixed matrix W[out, in] of the sizes
(and scales) alone: nearest picks one source, linear two taps, cubic four (indices clamped, so
taps that land on the same source add up), replication padding the clamped position, unfold the
position `window * step + offset`. The forward applies W, the backward W transposed, both as
matmuls, so no gather or scatter reaches the compiler (torch-mlir lowers the backwards, where it
lowers them at all, to `tm_tensor.scatter`). W is built in the graph from `arange` with torch's
own float32 index arithmetic (UpSample.h: area_pixel_compute_scale / _source_index, nearest_idx),
so the picked sources are the CPU's. Half-precision inputs are resampled in float32 and rounded
once, as torch's CPU kernels do. Imported by retrace.py.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch

from npu_mlir.frontend.decompositions.precision import HALF

aten = torch.ops.aten
CUBIC_A = -0.75  # torch's bicubic convolution constant (get_cubic_upsample_coefficients)


def _taps_matrix(sources: Sequence[tuple[torch.Tensor, torch.Tensor | float]], in_size: int) -> torch.Tensor:
    """W[o, i] = sum of the weights of the taps whose (clamped) source index for output o is i."""
    positions = torch.arange(in_size, device=sources[0][0].device)
    matrix = None
    for index, weight in sources:
        hit = (index.clamp(0, in_size - 1).unsqueeze(-1) == positions).to(torch.float32)
        term = hit * (weight.unsqueeze(-1) if isinstance(weight, torch.Tensor) else weight)
        matrix = term if matrix is None else matrix + term
    return matrix


def _outputs(out_size: int, device: torch.device) -> torch.Tensor:
    return torch.arange(out_size, dtype=torch.float32, device=device)


def _area_scale(in_size: int, out_size: int, align_corners: bool, scale: float | None) -> float:
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else in_size / out_size


def _source(o: torch.Tensor, scale: float, align_corners: bool, cubic: bool) -> torch.Tensor:
    if align_corners:
        return o * scale
    real = scale * (o + 0.5) - 0.5
    return real if cubic else torch.clamp(real, min=0.0)


def _nearest(in_size: int, out_size: int, scale: float | None, exact: bool, device: torch.device) -> torch.Tensor:
    ratio = 1.0 / scale if scale is not None and scale > 0 else in_size / out_size
    position = (_outputs(out_size, device) + 0.5) * ratio if exact else _outputs(out_size, device) * ratio
    index = torch.floor(position).to(torch.int64)
    return _taps_matrix([(torch.clamp(index, max=in_size - 1), 1.0)], in_size)


def _linear(in_size: int, out_size: int, align_corners: bool, scale: float | None, device: torch.device) -> torch.Tensor:
    if in_size == out_size:  # the CPU kernel copies a dim it does not resize, whatever the scale
        return _taps_matrix([(torch.arange(out_size, device=device), 1.0)], in_size)
    real = _source(_outputs(out_size, device), _area_scale(in_size, out_size, align_corners, scale), align_corners, False)
    low = real.to(torch.int64)
    high = low + (low < in_size - 1).to(torch.int64)
    lam = torch.clamp(real - low.to(torch.float32), 0.0, 1.0)
    return _taps_matrix([(low, 1.0 - lam), (high, lam)], in_size)


def _cubic(in_size: int, out_size: int, align_corners: bool, scale: float | None, device: torch.device) -> torch.Tensor:
    real = _source(_outputs(out_size, device), _area_scale(in_size, out_size, align_corners, scale), align_corners, True)
    floor = torch.floor(real)
    t = real - floor
    index = floor.to(torch.int64)

    def near(x: torch.Tensor) -> torch.Tensor:  # cubic_convolution1, |x| <= 1
        return ((CUBIC_A + 2) * x - (CUBIC_A + 3)) * x * x + 1

    def far(x: torch.Tensor) -> torch.Tensor:  # cubic_convolution2, 1 < |x| < 2
        return ((CUBIC_A * x - 5 * CUBIC_A) * x + 8 * CUBIC_A) * x - 4 * CUBIC_A

    weights = (far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t))
    return _taps_matrix([(index - 1 + k, w) for k, w in enumerate(weights)], in_size)


def _apply(x: torch.Tensor, matrices: Sequence[torch.Tensor], transpose: bool) -> torch.Tensor:
    """x with its last len(matrices) dims mapped by W (forward) or W transposed (backward)."""
    dtype = x.dtype
    y = x.float() if dtype in HALF else x
    first = y.dim() - len(matrices)
    for k, matrix in enumerate(matrices):
        matrix = matrix.to(y.dtype)
        moved = y.movedim(first + k, -1)
        moved = moved @ (matrix if transpose else matrix.t())
        y = moved.movedim(-1, first + k)
    return y.to(dtype)


def _scales(values: Sequence[float | None], count: int) -> list[float | None]:
    return list(values) if values else [None] * count


def _upsample(kind: str) -> tuple[Callable, Callable]:
    """(forward, backward) of an upsample_* op of this interpolation kind."""
    def matrices(in_sizes: Sequence[int], out_sizes: Sequence[int], align_corners: bool,
                 scales: Sequence[float | None], device: torch.device) -> list[torch.Tensor]:
        if kind in ("nearest", "nearest_exact"):
            return [_nearest(i, o, s, kind == "nearest_exact", device) for i, o, s in zip(in_sizes, out_sizes, scales)]
        build = _cubic if kind == "cubic" else _linear
        return [build(i, o, align_corners, s, device) for i, o, s in zip(in_sizes, out_sizes, scales)]

    aligned = kind not in ("nearest", "nearest_exact")

    def forward(self: torch.Tensor, output_size: Sequence[int], *rest: object) -> torch.Tensor:
        align_corners, scales = (bool(rest[0]), rest[1:]) if aligned else (False, rest)
        spatial = len(output_size)
        scales = _scales(scales, spatial)
        return _apply(self, matrices(self.shape[-spatial:], output_size, align_corners, scales, self.device), transpose=False)

    def backward(grad_output: torch.Tensor, output_size: Sequence[int], input_size: Sequence[int],
                 *rest: object) -> torch.Tensor:
        align_corners, scales = (bool(rest[0]), rest[1:]) if aligned else (False, rest)
        spatial = len(output_size)
        scales = _scales(scales, spatial)
        return _apply(grad_output, matrices(input_size[-spatial:], output_size, align_corners, scales, grad_output.device), transpose=True)

    return forward, backward


def _replication_matrices(self: torch.Tensor, padding: Sequence[int]) -> list[torch.Tensor]:
    # padding pairs run from the last dim backwards: [left, right, top, bottom, front, back]; a
    # negative pad crops. Output o reads input clamp(o - before).
    spatial = len(padding) // 2
    matrices = []
    for k in range(spatial):
        dim = self.dim() - spatial + k
        before, after = padding[2 * (spatial - 1 - k)], padding[2 * (spatial - 1 - k) + 1]
        out_size = self.shape[dim] + before + after
        index = torch.arange(out_size, device=self.device) - before
        matrices.append(_taps_matrix([(index, 1.0)], self.shape[dim]))
    return matrices


def replication_pad(self: torch.Tensor, padding: Sequence[int]) -> torch.Tensor:
    return _apply(self, _replication_matrices(self, padding), transpose=False)


def replication_pad_backward(grad_output: torch.Tensor, self: torch.Tensor, padding: Sequence[int]) -> torch.Tensor:
    return _apply(grad_output, _replication_matrices(self, padding), transpose=True)


def unfold_backward(grad_in: torch.Tensor, input_sizes: Sequence[int], dim: int, size: int,
                    step: int) -> torch.Tensor:
    if not input_sizes:  # a 0-d tensor unfolds into one window of its one element
        return grad_in.reshape(())
    dim %= len(input_sizes)
    windows = grad_in.shape[dim]
    # grad_in[..., w, ..., s] adds into input position w * step + s.
    moved = grad_in.movedim(dim, -2)
    flat = moved.reshape(*moved.shape[:-2], windows * size)
    positions = torch.arange(windows, device=grad_in.device).unsqueeze(-1) * step
    target = (positions + torch.arange(size, device=grad_in.device)).reshape(-1)
    matrix = _taps_matrix([(target, 1.0)], input_sizes[dim])  # [(w, s), i]
    dtype = grad_in.dtype
    acc = flat.float() if dtype in HALF else flat
    return (acc @ matrix.to(acc.dtype)).to(dtype).movedim(-1, dim)


_NEAREST = _upsample("nearest")
_NEAREST_EXACT = _upsample("nearest_exact")
_LINEAR = _upsample("linear")
_CUBIC = _upsample("cubic")

RESAMPLING: dict[torch._ops.OpOverload, Callable] = {
    aten.upsample_nearest1d.default: _NEAREST[0],
    aten.upsample_nearest1d_backward.default: _NEAREST[1],
    aten.upsample_nearest2d.default: _NEAREST[0],
    aten.upsample_nearest2d_backward.default: _NEAREST[1],
    aten.upsample_nearest3d.default: _NEAREST[0],
    aten.upsample_nearest3d_backward.default: _NEAREST[1],
    aten._upsample_nearest_exact1d.default: _NEAREST_EXACT[0],
    aten._upsample_nearest_exact1d_backward.default: _NEAREST_EXACT[1],
    aten._upsample_nearest_exact2d.default: _NEAREST_EXACT[0],
    aten._upsample_nearest_exact2d_backward.default: _NEAREST_EXACT[1],
    aten._upsample_nearest_exact3d.default: _NEAREST_EXACT[0],
    aten._upsample_nearest_exact3d_backward.default: _NEAREST_EXACT[1],
    aten.upsample_linear1d.default: _LINEAR[0],
    aten.upsample_linear1d_backward.default: _LINEAR[1],
    aten.upsample_bilinear2d.default: _LINEAR[0],
    aten.upsample_bilinear2d_backward.default: _LINEAR[1],
    aten.upsample_trilinear3d.default: _LINEAR[0],
    aten.upsample_trilinear3d_backward.default: _LINEAR[1],
    aten.upsample_bicubic2d.default: _CUBIC[0],
    aten.upsample_bicubic2d_backward.default: _CUBIC[1],
    aten.replication_pad1d.default: replication_pad,
    aten.replication_pad2d.default: replication_pad,
    aten.replication_pad3d.default: replication_pad,
    aten.replication_pad1d_backward.default: replication_pad_backward,
    aten.replication_pad2d_backward.default: replication_pad_backward,
    aten.replication_pad3d_backward.default: replication_pad_backward,
    aten.unfold_backward.default: unfold_backward,
}
