"""torch_npu.npu_rms_norm: RMS normalization over gamma's dims, one compiled kernel per call."""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["npu_rms_norm"]


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
    return torch.ops.npu.npu_rms_norm(input, gamma, epsilon)


def _setup_context(ctx: Any, inputs: tuple, output: tuple) -> None:
    self, gamma, _ = inputs
    ctx.save_for_backward(self, gamma, output[1])
    ctx.mark_non_differentiable(output[1])


def _backward(ctx: Any, dy: torch.Tensor, _: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, None]:
    self, gamma, rstd = ctx.saved_tensors
    dx, dgamma = torch.ops.npu.npu_rms_norm_backward(dy, self, gamma, rstd)
    # torch_npu's RmsNormGrad accumulates dgamma in float32; the parameter's gradient has its dtype.
    return dx, dgamma.to(gamma.dtype), None


torch.library.register_autograd("npu::npu_rms_norm", _backward, setup_context=_setup_context)
