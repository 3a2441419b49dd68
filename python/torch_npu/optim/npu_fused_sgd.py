"""NpuFusedSGD: torch_npu's fused SGD (momentum, dampening, weight decay, Nesterov)."""

from __future__ import annotations

from typing import Any, Iterable

import torch
from torch.optim.optimizer import required

from torch_npu.optim.npu_fused_optim_base import NpuFusedOptimizerBase, PartStates
from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["NpuFusedSGD"]


class NpuFusedSGD(NpuFusedOptimizerBase):
    r"""Stochastic gradient descent (optionally with momentum), one kernel per combined buffer per step.

    Same update as ``torch.optim.SGD`` (the momentum buffer starts as the first step's gradient).

    Args:
        params (iterable): parameters to optimize, or dicts defining parameter groups.
        lr (float): learning rate (required).
        momentum (float, optional): momentum factor (default: 0).
        dampening (float, optional): dampening for momentum (default: 0).
        weight_decay (float, optional): weight decay, L2 penalty (default: 0).
        nesterov (bool, optional): enables Nesterov momentum (default: ``False``).
    """

    def __init__(self, params: Iterable[Any], lr: float = required, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False):
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr} " + pta_error(ErrCode.VALUE))
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum} " + pta_error(ErrCode.VALUE))
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay} " + pta_error(ErrCode.VALUE))
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening " + pta_error(ErrCode.VALUE))
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov)
        super().__init__(params, defaults)
        # True while momentum buffers were just made from this step's gradient (they need no update).
        self._momentum_fresh = False

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)

    def _live_state_names(self, group: dict[str, Any]) -> tuple[str, ...]:
        return ("momentum_buffer",) if group["momentum"] != 0 else ()

    def _init_param_state(self, p: torch.nn.Parameter, group: dict[str, Any]) -> None:
        state = self.state[p]
        if group["momentum"] != 0 and "momentum_buffer" not in state:
            state["momentum_buffer"] = torch.add(p.grad, p, alpha=group["weight_decay"]).detach()
            self._momentum_fresh = True

    def _update_part(self, group: dict[str, Any], step: int, param: torch.Tensor, grad: torch.Tensor,
                     states: PartStates) -> None:
        # torch's fused SGD step over the combined buffers, written in place (one multi-tensor launch, no
        # result copied back). A fresh momentum buffer already holds this step's gradient, which is
        # what torch's first step sets it to.
        momentum = group["momentum"]
        torch._fused_sgd_([param], [grad], [states["momentum_buffer"]] if momentum != 0 else [],
                          weight_decay=group["weight_decay"], momentum=momentum, lr=group["lr"],
                          dampening=group["dampening"], nesterov=group["nesterov"], maximize=False,
                          is_first_step=self._momentum_fresh)

    def step(self, closure: Any = None) -> Any:
        loss = super().step(closure)
        self._momentum_fresh = False
        return loss
