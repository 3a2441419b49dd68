"""NpuFusedRMSprop (torch.optim.RMSprop's update) and NpuFusedRMSpropTF (TensorFlow's), as in torch_npu."""

from __future__ import annotations

from typing import Any, Iterable

import torch

from torch_npu.optim.npu_fused_optim_base import NpuFusedOptimizerBase, PartStates
from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["NpuFusedRMSprop", "NpuFusedRMSpropTF"]


class _NpuFusedRMSpropBase(NpuFusedOptimizerBase):
    _tf_style = False
    _square_avg_init = 0.0  # TensorFlow starts the squared average at 1

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]):
        for name in ("lr", "eps", "momentum", "weight_decay", "alpha"):
            if defaults[name] < 0.0:
                raise ValueError(f"Invalid {name} value: {defaults[name]} " + pta_error(ErrCode.VALUE))
        super().__init__(params, defaults)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)

    def _live_state_names(self, group: dict[str, Any]) -> tuple[str, ...]:
        names = ("square_avg",)
        names += ("momentum_buffer",) if group["momentum"] > 0 else ()
        return names + (("grad_avg",) if group["centered"] else ())

    def _init_param_state(self, p: torch.nn.Parameter, group: dict[str, Any]) -> None:
        state = self.state[p]
        state.setdefault("step", 0)
        if "square_avg" not in state:
            state["square_avg"] = torch.full_like(p, self._square_avg_init, memory_format=torch.contiguous_format)
        for name in self._live_state_names(group)[1:]:
            if name not in state:
                state[name] = torch.zeros_like(p, memory_format=torch.contiguous_format)

    def _update_part(self, group: dict[str, Any], step: int, param: torch.Tensor, grad: torch.Tensor,
                     states: PartStates) -> None:
        square_avg = states["square_avg"]
        # An unused state is stood in for by square_avg (read, never written: its result is dropped).
        grad_avg = states.get("grad_avg", square_avg)
        buf = states.get("momentum_buffer", square_avg)
        self._step_in_place(
            "_npu_fused_rmsprop", [param, grad, square_avg, grad_avg, buf],
            [group["lr"], group["alpha"], group["eps"], group["weight_decay"], group["momentum"], group["centered"],
             group["momentum"] > 0, self._tf_style, group.get("decoupled_decay", False),
             group.get("lr_in_momentum", False)],
            [0, 2, 3 if "grad_avg" in states else -1, 4 if "momentum_buffer" in states else -1])


class NpuFusedRMSprop(_NpuFusedRMSpropBase):
    r"""RMSprop, one kernel per combined buffer per step; the update of ``torch.optim.RMSprop``.

    Args:
        params (iterable): parameters to optimize, or dicts defining parameter groups.
        lr (float, optional): learning rate (default: 1e-2).
        alpha (float, optional): smoothing constant (default: 0.99).
        eps (float, optional): added to the denominator (default: 1e-8).
        weight_decay (float, optional): L2 penalty (default: 0).
        momentum (float, optional): momentum factor (default: 0).
        centered (bool, optional): normalise by the gradient's estimated variance (default: ``False``).
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False):
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                                      centered=centered))


class NpuFusedRMSpropTF(_NpuFusedRMSpropBase):
    r"""RMSprop as TensorFlow computes it (eps inside the square root, squared average starting at 1).

    Args:
        params (iterable): parameters to optimize, or dicts defining parameter groups.
        lr (float, optional): learning rate (default: 1e-2).
        alpha (float, optional): smoothing constant (default: 0.9).
        eps (float, optional): added inside the square root (default: 1e-10).
        weight_decay (float, optional): weight decay (default: 0).
        momentum (float, optional): momentum factor (default: 0).
        centered (bool, optional): normalise by the gradient's estimated variance (default: ``False``).
        decoupled_decay (bool, optional): decay the parameter instead of the gradient (default: ``False``).
        lr_in_momentum (bool, optional): accumulate the learning rate in the momentum buffer (default: ``True``).
    """

    _tf_style = True
    _square_avg_init = 1.0

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.9, eps: float = 1e-10,
                 weight_decay: float = 0, momentum: float = 0.0, centered: bool = False, decoupled_decay: bool = False,
                 lr_in_momentum: bool = True):
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                                      centered=centered, decoupled_decay=decoupled_decay,
                                      lr_in_momentum=lr_in_momentum))
