"""torch_npu.npu_rotary_mul: rotary position embedding, one compiled kernel per call."""

from __future__ import annotations

import torch

__all__ = ["npu_rotary_mul"]
# Looked up once: `torch.ops.npu.<name>` costs ~20 us per attribute walk, more than the kernel call.
_OP = torch.ops.npu.npu_rotary_mul.default


def npu_rotary_mul(input: torch.Tensor, r1: torch.Tensor, r2: torch.Tensor,
                   rotary_mode: str = "half") -> torch.Tensor:
    """Return ``input * r1 + rotate(input) * r2`` (RoPE with cos ``r1`` and sin ``r2``).

    Args:
        input: float32, float16 or bfloat16 NPU tensor with an even last dim.
        r1, r2: same dtype, broadcastable to ``input``'s shape (e.g. ``[1, S, 1, D]`` for BSND).
        rotary_mode: ``'half'`` (default; rotate(x) = cat(-x2, x1) of the two halves of the last
            dim) or ``'interleave'`` (each pair (x[2i], x[2i+1]) becomes (-x[2i+1], x[2i])).

    Runs as one fused kernel computed in float32; differentiable in all three tensors (the backward
    is ``npu_rotary_mul_backward``, one kernel). Returns at once (the kernel is queued on the stream).
    """
    return _OP(input, r1, r2, rotary_mode)

