"""References of the GradScaler kernels: unscale + non-finite check, and the scale update.

torch.amp.GradScaler calls aten::_amp_foreach_non_finite_check_and_unscale_ and aten::_amp_update_scale_;
their npu kernels (csrc/aten/AmpOps.cpp) run these references compiled, so found_inf, the scale and the
growth tracker stay on the device and a step costs no device-to-host copy. Semantics are torch's CUDA
kernels'. Plain torch (listed in references/__init__.py): no torch_npu import.
"""

from __future__ import annotations

import torch


def _npu_amp_unscale(grad: torch.Tensor, found_inf: torch.Tensor,
                     inv_scale: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(grad * inv_scale, found_inf raised to 1.0 if grad holds an inf or NaN)."""
    g = grad.float()
    # x - x is NaN exactly when x is inf or NaN: one compare, no abs/inf constant.
    nonfinite = torch.isnan(g - g).any()
    found = torch.maximum(found_inf, nonfinite.to(found_inf.dtype))
    return (g * inv_scale).to(grad.dtype), found


def _npu_amp_update_scale(scale: torch.Tensor, growth_tracker: torch.Tensor, found_inf: torch.Tensor,
                          scale_growth_factor: float, scale_backoff_factor: float,
                          growth_interval: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(new scale, new growth tracker): back off on inf/NaN, grow after `growth_interval` clean steps."""
    found = found_inf > 0
    successful = growth_tracker + 1
    grow = successful == growth_interval
    grown = scale * scale_growth_factor
    # A growth that overflows float32 keeps the old scale (torch checks isfinite of the new scale).
    grown = torch.where(torch.isnan(grown - grown), scale, grown)
    new_scale = torch.where(found, scale * scale_backoff_factor, torch.where(grow, grown, scale))
    new_tracker = torch.where(found | grow, torch.zeros_like(successful), successful)
    return new_scale, new_tracker


REFERENCES = {"_npu_amp_unscale": _npu_amp_unscale, "_npu_amp_update_scale": _npu_amp_update_scale}
