"""Reference of npu_rotary_mul and its backward (torch_npu semantics).

out = x * r1 + rotate(x) * r2, where rotate is, along the last dim,
    'half':       [-x2, x1] for x1, x2 = x.chunk(2, -1)          (GPT-NeoX style)
    'interleave': pairs (x[2i], x[2i+1]) -> (-x[2i+1], x[2i])   (GPT-J style)
r1 and r2 broadcast against x. rotate is a 90-degree rotation of each pair, so its transpose is
-rotate: the backward is dx = g * r1 - rotate(g * r2), and dr1 / dr2 are g * x / g * rotate(x)
summed over the dims r1 / r2 broadcast along. Computed in float32, rounded once per result.
Plain torch (listed in references/__init__.py): no torch_npu import.
"""

from __future__ import annotations

import torch

MODES = ("half", "interleave")


def rotate(x: torch.Tensor, rotary_mode: str) -> torch.Tensor:
    if rotary_mode == "half":
        x1, x2 = x.chunk(2, -1)
        return torch.cat((-x2, x1), -1)
    if rotary_mode == "interleave":
        return torch.stack((-x[..., 1::2], x[..., 0::2]), -1).reshape(x.shape)
    raise ValueError(f"rotary_mode must be one of {MODES}, got {rotary_mode!r}")


def _reduce_to(grad: torch.Tensor, shape: torch.Size) -> torch.Tensor:
    """Sum `grad` over the dims a tensor of `shape` was broadcast along."""
    extra = grad.dim() - len(shape)
    dims = list(range(extra)) + [extra + i for i, size in enumerate(shape) if size == 1 and grad.shape[extra + i] != 1]
    return grad.sum(dims, keepdim=True).reshape(shape) if dims else grad


def npu_rotary_mul(self: torch.Tensor, r1: torch.Tensor, r2: torch.Tensor,
                   rotary_mode: str = "half") -> torch.Tensor:
    x = self.float()
    return (x * r1.float() + rotate(x, rotary_mode) * r2.float()).to(self.dtype)


def npu_rotary_mul_backward(grad: torch.Tensor, self: torch.Tensor, r1: torch.Tensor, r2: torch.Tensor,
                            rotary_mode: str = "half") -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g, x = grad.float(), self.float()
    dx = g * r1.float() - rotate(g * r2.float(), rotary_mode)
    dr1 = _reduce_to(g * x, r1.shape)
    dr2 = _reduce_to(g * rotate(x, rotary_mode), r2.shape)
    return dx.to(self.dtype), dr1.to(r1.dtype), dr2.to(r2.dtype)


REFERENCES = {"npu_rotary_mul": npu_rotary_mul, "npu_rotary_mul_backward": npu_rotary_mul_backward}
