"""constant_pad_nd with negative pads, as slices and a pad of the rest.

A negative pad crops (F.pad(x, (-1, 2)), and the backward of every constant pad: AOTAutograd's
gradient of constant_pad_nd(x, pad) is constant_pad_nd(grad, -pad)). torch-mlir lowers it as a
tensor.pad whose negative low becomes a memref.subview at a negative offset, which the compiler
refuses, so the graph split around each pad of a training graph. Here the negative sides are
narrowed first (views the kernels read in place) and only the non-negative ones padded; a pad with
no negative side stays whole (the compiler lowers it).
"""

from __future__ import annotations

from typing import Any

import torch

aten = torch.ops.aten


def _constant_pad_nd(x: torch.Tensor, pad: list[int], value: float = 0) -> Any:
    if any(not isinstance(p, int) for p in pad) or min(pad, default=0) >= 0:  # symbolic pads: left to the op
        return NotImplemented
    cropped = x
    for k in range(len(pad) // 2):
        dim = x.dim() - 1 - k
        low, high = pad[2 * k], pad[2 * k + 1]
        start = -low if low < 0 else 0
        stop = cropped.shape[dim] + high if high < 0 else cropped.shape[dim]
        if start or stop != cropped.shape[dim]:
            cropped = aten.slice.Tensor(cropped, dim, start, max(start, stop))
    rest = [max(p, 0) for p in pad]
    return aten.constant_pad_nd.default(cropped, rest, value) if any(rest) else aten.clone.default(cropped)


def pad_decompositions() -> dict:
    return {aten.constant_pad_nd.default: _constant_pad_nd}


__all__ = ["pad_decompositions"]
