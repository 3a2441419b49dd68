"""torch_npu.npu_swiglu: silu(a) * b for a, b = x.chunk(2, dim), one compiled kernel per call."""

from __future__ import annotations

import torch

__all__ = ["npu_swiglu"]
# Looked up once: `torch.ops.npu.<name>` costs ~20 us per attribute walk, more than the kernel call.
_OP = torch.ops.npu.npu_swiglu.default


def npu_swiglu(input: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Return ``silu(a) * b`` where ``a, b = input.chunk(2, dim)`` (torch_npu's SwiGLU).

    Args:
        input: float32, float16 or bfloat16 NPU tensor whose size along ``dim`` is even.
        dim: the dimension split in two halves; default -1.

    Runs as one fused kernel (computed in float32, rounded once); differentiable, its backward is
    ``npu_swiglu_backward``, also one kernel. Returns at once (the kernel is queued on the stream).
    """
    return _OP(input, dim)

