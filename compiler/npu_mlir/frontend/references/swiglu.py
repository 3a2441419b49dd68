"""Reference of npu_swiglu and its backward: silu(a) * b for a, b = self.chunk(2, dim).

Computed in float32 and rounded once to self's dtype, as torch_npu's kernel accumulates. Imported by
compile workers (listed in references/__init__.py): no torch_npu import.
"""

from __future__ import annotations

import torch


def npu_swiglu(self: torch.Tensor, dim: int = -1) -> torch.Tensor:
    a, b = self.float().chunk(2, dim)
    return (torch.nn.functional.silu(a) * b).to(self.dtype)


def npu_swiglu_backward(grad_output: torch.Tensor, self: torch.Tensor, dim: int = -1) -> torch.Tensor:
    a, b = self.float().chunk(2, dim)
    grad = grad_output.float()
    sigmoid = torch.sigmoid(a)
    silu = a * sigmoid
    grad_a = grad * b * sigmoid * (1 + a * (1 - sigmoid))
    return torch.cat((grad_a, grad * silu), dim).to(self.dtype)


REFERENCES = {"npu_swiglu": npu_swiglu, "npu_swiglu_backward": npu_swiglu_backward}
