"""NpuFusedAdam and NpuFusedAdamW: torch_npu's fused Adam (L2 weight decay) and AdamW (decoupled)."""

from __future__ import annotations

from typing import Any, Iterable

import torch

from torch_npu.optim.npu_fused_optim_base import NpuFusedOptimizerBase, PartStates
from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["NpuFusedAdam", "NpuFusedAdamW"]


def _check_adam_args(lr: float, betas: tuple[float, float], eps: float, weight_decay: float) -> None:
    """Raise ValueError (with torch_npu's messages) for an out-of-range Adam hyperparameter."""
    if lr < 0.0:
        raise ValueError(f"Invalid learning rate: {lr} " + pta_error(ErrCode.VALUE))
    if eps < 0.0:
        raise ValueError(f"Invalid epsilon value: {eps} " + pta_error(ErrCode.VALUE))
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta} " + pta_error(ErrCode.VALUE))
    if weight_decay < 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay} " + pta_error(ErrCode.VALUE))


class _NpuFusedAdamBase(NpuFusedOptimizerBase):
    _decoupled_weight_decay = False

    def __init__(self, params: Iterable[Any], lr: float, betas: tuple[float, float], eps: float, weight_decay: float,
                 amsgrad: bool):
        _check_adam_args(lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad))

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)

    def _live_state_names(self, group: dict[str, Any]) -> tuple[str, ...]:
        return ("exp_avg", "exp_avg_sq", "max_exp_avg_sq") if group["amsgrad"] else ("exp_avg", "exp_avg_sq")

    def _init_param_state(self, p: torch.nn.Parameter, group: dict[str, Any]) -> None:
        state = self.state[p]
        if "step" not in state:
            state["step"] = 0
        for name in self._live_state_names(group):
            if name not in state:
                state[name] = torch.zeros_like(p, memory_format=torch.contiguous_format)

    def _update_part(self, group: dict[str, Any], step: int, param: torch.Tensor, grad: torch.Tensor,
                     states: PartStates) -> None:
        # torch's fused Adam step over the combined buffers, written in place (one multi-tensor launch,
        # no result copied back); the step count is a device scalar, as that kernel reads it.
        beta1, beta2 = group["betas"]
        amsgrad = group["amsgrad"]
        fused = torch._fused_adamw_ if self._decoupled_weight_decay else torch._fused_adam_
        step_count = torch.full((1,), float(step), dtype=torch.float32, device=param.device)
        fused([param], [grad], [states["exp_avg"]], [states["exp_avg_sq"]],
              [states["max_exp_avg_sq"]] if amsgrad else [], [step_count], lr=group["lr"], beta1=beta1,
              beta2=beta2, weight_decay=group["weight_decay"], eps=group["eps"], amsgrad=amsgrad, maximize=False)


class NpuFusedAdam(_NpuFusedAdamBase):
    r"""Adam with L2 weight decay, one launch per combined buffer per step; the update of ``torch.optim.Adam``.

    Args:
        params (iterable): parameters to optimize, or dicts defining parameter groups.
        lr (float, optional): learning rate (default: 1e-3).
        betas (Tuple[float, float], optional): running-average coefficients (default: (0.9, 0.999)).
        eps (float, optional): added to the denominator (default: 1e-8).
        weight_decay (float, optional): L2 penalty added to the gradient (default: 0).
        amsgrad (bool, optional): use the AMSGrad variant (default: ``False``).
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad)


class NpuFusedAdamW(_NpuFusedAdamBase):
    r"""AdamW (decoupled weight decay), one launch per combined buffer per step; the update of ``torch.optim.AdamW``.

    Args:
        params (iterable): parameters to optimize, or dicts defining parameter groups.
        lr (float, optional): learning rate (default: 1e-3).
        betas (Tuple[float, float], optional): running-average coefficients (default: (0.9, 0.999)).
        eps (float, optional): added to the denominator (default: 1e-8).
        weight_decay (float, optional): decoupled weight decay coefficient (default: 1e-2).
        amsgrad (bool, optional): use the AMSGrad variant (default: ``False``).
    """

    _decoupled_weight_decay = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad)
