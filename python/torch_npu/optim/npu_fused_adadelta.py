"""NpuFusedAdadelta: torch_npu's fused Adadelta."""

from __future__ import annotations

from typing import Any, Iterable

import torch

from torch_npu.optim.npu_fused_optim_base import NpuFusedOptimizerBase, PartStates
from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["NpuFusedAdadelta"]


class NpuFusedAdadelta(NpuFusedOptimizerBase):
    r"""Adadelta, one kernel per combined buffer per step; the update of ``torch.optim.Adadelta``.

    Args:
        params (iterable): parameters to optimize, or dicts defining parameter groups.
        lr (float, optional): coefficient scaling the delta (default: 1.0).
        rho (float, optional): running-average coefficient of squared gradients (default: 0.9).
        eps (float, optional): added inside the square roots (default: 1e-6).
        weight_decay (float, optional): L2 penalty (default: 0).
    """

    def __init__(self, params: Iterable[Any], lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr} " + pta_error(ErrCode.VALUE))
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho} " + pta_error(ErrCode.VALUE))
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps} " + pta_error(ErrCode.VALUE))
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay} " + pta_error(ErrCode.VALUE))
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay))

    def _live_state_names(self, group: dict[str, Any]) -> tuple[str, ...]:
        return ("square_avg", "acc_delta")

    def _init_param_state(self, p: torch.nn.Parameter, group: dict[str, Any]) -> None:
        state = self.state[p]
        state.setdefault("step", 0)
        for name in self._live_state_names(group):
            if name not in state:
                state[name] = torch.zeros_like(p, memory_format=torch.contiguous_format)

    def _update_part(self, group: dict[str, Any], step: int, param: torch.Tensor, grad: torch.Tensor,
                     states: PartStates) -> None:
        self._step_in_place("_npu_fused_adadelta", [param, grad, states["square_avg"], states["acc_delta"]],
                            [group["lr"], group["rho"], group["eps"], group["weight_decay"]], [0, 2, 3])
