"""NpuFusedBertAdam: torch_npu's fused BERT Adam (no bias correction, warmup schedules, gradient clipping)."""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable

import torch
from torch.optim.optimizer import required

from torch_npu.optim.npu_fused_optim_base import NpuFusedOptimizerBase, PartStates
from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["NpuFusedBertAdam"]

WARMUP_DEFAULT = 0.002
DEGREE_DEFAULT = 0.5


def _warmup_cosine(x: float, warmup: float = WARMUP_DEFAULT) -> float:
    return x / warmup if x < warmup else 0.5 * (1.0 + math.cos(math.pi * x))


def _warmup_constant(x: float, warmup: float = WARMUP_DEFAULT) -> float:
    return x / warmup if x < warmup else 1.0


def _warmup_linear(x: float, warmup: float = WARMUP_DEFAULT) -> float:
    return x / warmup if x < warmup else max((x - 1.0) / (warmup - 1.0), 0.0)


def _warmup_poly(x: float, warmup: float = WARMUP_DEFAULT, degree: float = DEGREE_DEFAULT) -> float:
    return x / warmup if x < warmup else (1.0 - x) ** degree


# The learning-rate multiplier at training progress x = step / t_total.
SCHEDULES: dict[str, Callable[..., float]] = {
    "warmup_cosine": _warmup_cosine,
    "warmup_constant": _warmup_constant,
    "warmup_linear": _warmup_linear,
    "warmup_poly": _warmup_poly,
}


class NpuFusedBertAdam(NpuFusedOptimizerBase):
    r"""BERT's Adam (weight decay added to the update, no bias correction), one kernel per combined buffer.

    Each (group, dtype) buffer's gradient is first clipped to ``max_grad_norm`` (on the device, no sync).

    Args:
        params (iterable): parameters to optimize, or dicts defining parameter groups.
        lr (float): learning rate (required).
        warmup (float, optional): portion of ``t_total`` spent warming up; -1 for none (default: -1).
        t_total (int, optional): total training steps of the schedule; -1 for a constant rate (default: -1).
        schedule (str, optional): one of ``SCHEDULES`` (default: ``"warmup_linear"``).
        b1 (float, optional): Adam's beta1 (default: 0.9).
        b2 (float, optional): Adam's beta2 (default: 0.999).
        e (float, optional): Adam's epsilon (default: 1e-6).
        weight_decay (float, optional): decoupled weight decay (default: 0.01).
        max_grad_norm (float, optional): gradient clipping norm; -1 for none (default: 1.0).
    """

    def __init__(self, params: Iterable[Any], lr: float = required, warmup: float = -1, t_total: int = -1,
                 schedule: str = "warmup_linear", b1: float = 0.9, b2: float = 0.999, e: float = 1e-6,
                 weight_decay: float = 0.01, max_grad_norm: float = 1.0):
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr} " + pta_error(ErrCode.VALUE))
        if (warmup < 0.0 and warmup != -1) or warmup >= 1.0:
            raise ValueError(f"Invalid warmup: {warmup} " + pta_error(ErrCode.VALUE))
        if schedule not in SCHEDULES:
            raise ValueError(f"Invalid schedule parameter: {schedule}; expected one of {sorted(SCHEDULES)} "
                             + pta_error(ErrCode.VALUE))
        for name, beta in (("b1", b1), ("b2", b2)):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid {name} parameter: {beta} " + pta_error(ErrCode.VALUE))
        if e < 0.0:
            raise ValueError(f"Invalid epsilon value: {e} " + pta_error(ErrCode.VALUE))
        self.max_grad_norm = max_grad_norm
        super().__init__(params, dict(lr=lr, schedule=schedule, warmup=warmup, t_total=t_total, b1=b1, b2=b2, e=e,
                                      weight_decay=weight_decay, max_grad_norm=max_grad_norm))

    def _live_state_names(self, group: dict[str, Any]) -> tuple[str, ...]:
        return ("exp_avg", "exp_avg_sq")

    def _init_param_state(self, p: torch.nn.Parameter, group: dict[str, Any]) -> None:
        state = self.state[p]
        state.setdefault("step", 0)
        for name in self._live_state_names(group):
            if name not in state:
                state[name] = torch.zeros_like(p, memory_format=torch.contiguous_format)

    def _update_part(self, group: dict[str, Any], step: int, param: torch.Tensor, grad: torch.Tensor,
                     states: PartStates) -> None:
        if self.max_grad_norm > 0:
            norm = torch.linalg.vector_norm(grad, 2.0, dtype=torch.float32)
            clip_coef = (self.max_grad_norm / (norm + 1e-6)).clamp_(max=1.0)
        else:
            clip_coef = torch.ones((), device=grad.device)
        lr = group["lr"]
        if group["t_total"] != -1:
            # torch_npu's schedule reads the step count before this step's increment
            lr = lr * SCHEDULES[group["schedule"]]((step - 1) / group["t_total"], group["warmup"])
        # The clipped gradient is written back too: torch_npu clips the gradients in place.
        self._step_in_place("_npu_fused_bert_adam", [param, grad, states["exp_avg"], states["exp_avg_sq"], clip_coef],
                            [lr, group["b1"], group["b2"], group["e"], group["weight_decay"]], [0, 2, 3, 1])
