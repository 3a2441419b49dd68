"""NpuFusedAdamP: torch_npu's fused AdamP (Adam whose step is projected off scale-invariant weights).

AdamP (Heo et al., "AdamP: Slowing Down the Slowdown for Momentum Optimizers on Scale-invariant
Weights", the update of clovaai/AdamP that torch_npu wraps): Adam's moments and step, then, for each
parameter of two or more dimensions, the step loses its radial component when the gradient is nearly
orthogonal to the weight - per output channel first, else over the whole layer - and that parameter's
weight decay is scaled by ``wd_ratio``.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable

import torch

from torch_npu.optim.npu_fused_adam import _check_adam_args
from torch_npu.optim.npu_fused_optim_base import NpuFusedOptimizerBase, PartStates
from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["NpuFusedAdamP"]

ViewFn = Callable[[torch.Tensor], torch.Tensor]


def _channel_view(x: torch.Tensor) -> torch.Tensor:
    return x.reshape(x.size(0), -1)


def _layer_view(x: torch.Tensor) -> torch.Tensor:
    return x.reshape(1, -1)


def _cosine_similarity(x: torch.Tensor, y: torch.Tensor, eps: float, view: ViewFn) -> torch.Tensor:
    x, y = view(x), view(y)
    return (x * y).sum(dim=1).abs() / (x.norm(dim=1) + eps) / (y.norm(dim=1) + eps)


def _projected(p: torch.Tensor, grad: torch.Tensor, perturb: torch.Tensor, delta: float, wd_ratio: float,
               eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """AdamP's projection of one parameter's step, and its weight-decay ratio, without a host sync.

    clovaai's version reads ``cosine.max() < threshold`` on the host for each view; here both views'
    projections are computed and the right one is selected on the device.
    """
    expand = [-1] + [1] * (p.dim() - 1)
    result, ratio = perturb, torch.ones((), device=p.device)
    # The layer view is the fallback of the channel view, so it is applied first and overridden.
    for view in (_layer_view, _channel_view):
        taken = _cosine_similarity(grad, p, eps, view).max() < delta / math.sqrt(view(p).size(1))
        p_n = p / (view(p).norm(dim=1).view(expand) + eps)
        projection = perturb - p_n * view(p_n * perturb).sum(dim=1).view(expand)
        result = torch.where(taken, projection, result)
        ratio = torch.where(taken, torch.full_like(ratio, wd_ratio), ratio)
    return result, ratio


class NpuFusedAdamP(NpuFusedOptimizerBase):
    r"""AdamP over combined buffers: the moments and the step are a few kernels per (group, dtype) buffer;
    the projection runs per parameter of two or more dimensions (its norms differ per parameter), all
    on the device (torch_npu reads each cosine similarity on the host).

    Args:
        params (iterable): parameters to optimize, or dicts defining parameter groups.
        lr (float, optional): learning rate (default: 1e-3).
        betas (Tuple[float, float], optional): running-average coefficients (default: (0.9, 0.999)).
        eps (float, optional): added to the denominator and to the norms (default: 1e-8).
        weight_decay (float, optional): decoupled weight decay coefficient (default: 0).
        delta (float, optional): cosine-similarity threshold of the projection (default: 0.1).
        wd_ratio (float, optional): weight-decay ratio of a projected parameter (default: 0.1).
        nesterov (bool, optional): use Nesterov momentum (default: ``False``).
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, delta: float = 0.1, wd_ratio: float = 0.1,
                 nesterov: bool = False):
        _check_adam_args(lr, betas, eps, weight_decay)
        if delta < 0.0:
            raise ValueError(f"Invalid delta value: {delta} " + pta_error(ErrCode.VALUE))
        if not 0.0 <= wd_ratio <= 1.0:
            raise ValueError(f"Invalid wd_ratio value: {wd_ratio} " + pta_error(ErrCode.VALUE))
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, delta=delta,
                                      wd_ratio=wd_ratio, nesterov=nesterov))

    def _live_state_names(self, group: dict[str, Any]) -> tuple[str, ...]:
        return ("exp_avg", "exp_avg_sq")

    def _init_param_state(self, p: torch.nn.Parameter, group: dict[str, Any]) -> None:
        state = self.state[p]
        state.setdefault("step", 0)
        for name in self._live_state_names(group):
            if name not in state:
                state[name] = torch.zeros_like(p, memory_format=torch.contiguous_format)

    def _wd_ratios(self, group: dict[str, Any], states: PartStates, param: torch.Tensor, grad: torch.Tensor,
                   perturb: torch.Tensor) -> torch.Tensor:
        """Project ``perturb`` in place, parameter by parameter; the weight-decay ratio of every element."""
        sizes = [p.numel() for p in states.params]
        ratios = []
        for p, p_part, g_part, s_part in zip(states.params, param.split(sizes), grad.split(sizes), perturb.split(sizes)):
            if p.dim() <= 1:
                ratios.append(torch.ones((), device=param.device))
                continue
            shaped = [t.view(p.shape) for t in (p_part.float(), g_part.float(), s_part)]
            projection, ratio = _projected(*shaped, group["delta"], group["wd_ratio"], group["eps"])
            s_part.copy_(projection.reshape(-1))
            ratios.append(ratio)
        segment_ids = getattr(states, "segment_ids", None)
        if segment_ids is None:
            segment_ids = torch.cat([torch.full((n,), i, dtype=torch.int64) for i, n in enumerate(sizes)])
            states.segment_ids = segment_ids = segment_ids.to(param.device)
        return torch.stack(ratios).index_select(0, segment_ids)

    def _update_part(self, group: dict[str, Any], step: int, param: torch.Tensor, grad: torch.Tensor,
                     states: PartStates) -> None:
        beta1, beta2 = group["betas"]
        # The moments stay in the parameter's dtype (as torch_npu) and are written in place; the
        # arithmetic is float32, and so is the step before its projection.
        (perturb,) = self._step_in_place(
            "_npu_fused_adamp_moments", [grad, states["exp_avg"], states["exp_avg_sq"]],
            [beta1, beta2, group["eps"], math.sqrt(1 - beta2 ** step), group["nesterov"]], [1, 2, -1])
        ratios = self._wd_ratios(group, states, param, grad, perturb)
        self._step_in_place("_npu_fused_adamp_update", [param, perturb, ratios],
                            [group["lr"], group["weight_decay"], group["lr"] / (1 - beta1 ** step)], [0])
