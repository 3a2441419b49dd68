"""torch.npu.amp.GradScaler: torch.amp.GradScaler("npu") with torch_npu's ``dynamic`` flag.

Unscaling and the scale update run as NPU kernels (csrc/aten/AmpOps.cpp): found_inf, the scale and
the growth tracker stay on the device. For torch_npu's fused optimizers the combined gradient buffer
of each dtype is unscaled by one kernel, instead of one per parameter.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import torch
from torch.amp.grad_scaler import _MultiDeviceReplicator, _refresh_per_optimizer_state

from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["GradScaler"]


class GradScaler(torch.amp.GradScaler):
    r"""``torch.npu.amp.GradScaler(args...)``: ``torch.amp.GradScaler("npu", args...)`` plus ``dynamic``.

    Args:
        init_scale (float, optional): initial scale factor (default: ``2.0**16``).
        growth_factor (float, optional): scale growth per stable interval (default: ``2.0``).
        backoff_factor (float, optional): scale shrink on inf/NaN (default: ``0.5``).
        growth_interval (int, optional): stable steps between growths (default: ``2000``).
        dynamic (bool, optional): adjust the scale in :meth:`update` and skip steps with inf/NaN
            gradients; with ``False`` the loss scale is static, as in torch_npu: the scale stays
            ``init_scale``, gradients are only multiplied by its inverse (no inf/NaN check, so no
            step is skipped) (default: ``True``).
        enabled (bool, optional): whether scaling is on (default: ``True``).
    """

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, dynamic: bool = True, enabled: bool = True):
        super().__init__("npu", init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)
        self._dynamic = dynamic

    def update(self, new_scale: float | torch.Tensor | None = None) -> None:
        r"""Update the scale (as torch.amp.GradScaler.update); a static scaler keeps it unless given ``new_scale``."""
        if self._enabled and new_scale is None and not self._dynamic:
            self._check_scale_growth_tracker("update")
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)
            return
        super().update(new_scale)

    def state_dict(self) -> dict[str, Any]:
        r"""torch.amp.GradScaler's state plus ``"dynamic"`` (empty when disabled)."""
        state = super().state_dict()
        if self._enabled:
            state["dynamic"] = self._dynamic
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        r"""Load a state; one saved by torch.amp.GradScaler (no ``"dynamic"`` key) loads as dynamic."""
        super().load_state_dict(state_dict)
        if self._enabled:
            self._dynamic = state_dict.get("dynamic", True)

    def _unscale_grads_(self, optimizer: torch.optim.Optimizer, inv_scale: torch.Tensor, found_inf: torch.Tensor,
                        allow_fp16: bool) -> dict[torch.device, torch.Tensor]:
        if not self._dynamic:
            return self._unscale_static_(optimizer, inv_scale, found_inf, allow_fp16)
        if not getattr(optimizer, "is_fused_optimizer", False):
            return super()._unscale_grads_(optimizer, inv_scale, found_inf, allow_fp16)
        optimizer._maybe_init_combined_params_and_grads()
        per_device_found_inf = _MultiDeviceReplicator(found_inf)
        per_device_inv_scale = _MultiDeviceReplicator(inv_scale)
        with torch.no_grad():
            for grads in optimizer.get_combined_grads():
                if grads is None:
                    continue
                if not allow_fp16 and grads.dtype == torch.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                torch._amp_foreach_non_finite_check_and_unscale_(
                    [grads], per_device_found_inf.get(grads.device), per_device_inv_scale.get(grads.device))
        return per_device_found_inf._per_device_tensors

    def _unscale_static_(self, optimizer: torch.optim.Optimizer, inv_scale: torch.Tensor, found_inf: torch.Tensor,
                         allow_fp16: bool) -> dict[torch.device, torch.Tensor]:
        """torch_npu's static loss scale: multiply the gradients by 1/scale, one launch per dtype, and
        report no inf (found_inf stays 0, so the step always runs)."""
        if getattr(optimizer, "is_fused_optimizer", False):
            optimizer._maybe_init_combined_params_and_grads()
            grads = [g for g in optimizer.get_combined_grads() if g is not None]
        else:
            grads = [p.grad for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
        per_dtype: dict[tuple[torch.device, torch.dtype], list[torch.Tensor]] = defaultdict(list)
        for g in grads:
            if not allow_fp16 and g.dtype == torch.float16:
                raise ValueError("Attempting to unscale FP16 gradients.")
            if g.is_sparse:
                raise RuntimeError("GradScaler(dynamic=False) unscales dense gradients only; got a sparse one "
                                   + pta_error(ErrCode.NOT_SUPPORT))
            per_dtype[(g.device, g.dtype)].append(g)
        per_device_inv_scale = _MultiDeviceReplicator(inv_scale)
        with torch.no_grad():
            for (device, _), group in per_dtype.items():
                torch._foreach_mul_(group, per_device_inv_scale.get(device))
        return {found_inf.device: found_inf}
