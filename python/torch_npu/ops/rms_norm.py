"""torch_npu.npu_rms_norm: RMS normalization over gamma's dims, one compiled kernel per call."""

from __future__ import annotations

import torch

__all__ = ["npu_rms_norm"]
# Looked up once: `torch.ops.npu.<name>` costs ~20 us per attribute walk, more than the kernel call.
_OP = torch.ops.npu.npu_rms_norm.default


def npu_rms_norm(input: torch.Tensor, gamma: torch.Tensor,
                 epsilon: float = 1e-6) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ``(y, rstd)``: ``y = input * rstd * gamma``, ``rstd = rsqrt(mean(input**2) + epsilon)``.

    Args:
        input: float32, float16 or bfloat16 NPU tensor.
        gamma: the scale, same dtype, whose shape equals the last ``gamma.dim()`` dims of ``input``;
            the mean runs over those dims.
        epsilon: added to the mean square; default 1e-6.

    ``rstd`` is float32, shaped like ``input`` with 1 in gamma's dims (torch_npu's layout). Runs as one
    fused kernel computed in float32; differentiable in ``input`` and ``gamma`` (the backward is
    ``npu_rms_norm_backward``, also one kernel). Returns at once (the kernel is queued on the stream).
    """
    return _OP(input, gamma, epsilon)

