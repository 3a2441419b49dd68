"""Reference of npu_rms_norm and its backward (torch_npu semantics).

y = x * rstd * gamma with rstd = rsqrt(mean(x^2) + epsilon) over the trailing dims gamma covers;
rstd is float32 with x's shape, 1 in those dims (torch_npu keeps them). Computed in float32 and
rounded once to x's dtype; the backward's dgamma is float32, as torch_npu's RmsNormGrad returns it.
Plain torch (listed in references/__init__.py): no torch_npu import.
"""

from __future__ import annotations

import torch


def _normalized_dims(self: torch.Tensor, gamma: torch.Tensor) -> list[int]:
    return list(range(self.dim() - gamma.dim(), self.dim()))


def npu_rms_norm(self: torch.Tensor, gamma: torch.Tensor,
                 epsilon: float | torch.Tensor = 1e-6) -> tuple[torch.Tensor, torch.Tensor]:
    x = self.float()
    rstd = torch.rsqrt((x * x).mean(_normalized_dims(self, gamma), keepdim=True) + epsilon)
    return (x * rstd * gamma.float()).to(self.dtype), rstd


def npu_rms_norm_backward(dy: torch.Tensor, self: torch.Tensor, gamma: torch.Tensor,
                          rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    dims = _normalized_dims(self, gamma)
    normalized = self.float() * rstd
    grad_normalized = dy.float() * gamma.float()
    projection = (grad_normalized * normalized).mean(dims, keepdim=True)
    dx = (grad_normalized - normalized * projection) * rstd
    leading = list(range(self.dim() - gamma.dim()))
    dgamma = dy.float() * normalized
    if leading:
        dgamma = dgamma.sum(leading)
    return dx.to(self.dtype), dgamma


REFERENCES = {"npu_rms_norm": npu_rms_norm, "npu_rms_norm_backward": npu_rms_norm_backward}
