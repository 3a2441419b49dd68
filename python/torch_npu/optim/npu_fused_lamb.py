"""NpuFusedLamb: torch_npu's fused LAMB (layer-wise trust ratio on top of Adam's step)."""

from __future__ import annotations

from typing import Any, Iterable

import torch

from torch_npu.optim.npu_fused_adam import _check_adam_args
from torch_npu.optim.npu_fused_optim_base import NpuFusedOptimizerBase, PartStates

__all__ = ["NpuFusedLamb"]


class NpuFusedLamb(NpuFusedOptimizerBase):
    r"""LAMB: Adam's step (no bias correction, L2 decay added to it) scaled per parameter by the trust ratio
    ``clamp(||p||, 0, 10) / ||step||`` (1 when either norm is 0).

    One kernel per combined buffer computes the moments and the step; the trust ratios take two norm
    kernels per parameter (their sizes differ) and a gather that spreads them over the buffer, all on
    the device (torch_npu reads each ratio on the host).

    Args:
        params (iterable): parameters to optimize, or dicts defining parameter groups.
        lr (float, optional): learning rate (default: 1e-3).
        betas (Tuple[float, float], optional): running-average coefficients (default: (0.9, 0.999)).
        eps (float, optional): added to the denominator (default: 1e-6).
        weight_decay (float, optional): L2 penalty added to the step (default: 0).
        adam (bool, optional): always use a trust ratio of 1, which makes this Adam (default: ``False``).
        use_global_grad_norm (bool, optional): divide the gradients by their global norm when it
            exceeds 1 (default: ``False``).
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-6, weight_decay: float = 0, adam: bool = False, use_global_grad_norm: bool = False):
        _check_adam_args(lr, betas, eps, weight_decay)
        self.adam = adam
        self.use_global_grad_norm = use_global_grad_norm
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    def _live_state_names(self, group: dict[str, Any]) -> tuple[str, ...]:
        return ("exp_avg", "exp_avg_sq")

    def _init_param_state(self, p: torch.nn.Parameter, group: dict[str, Any]) -> None:
        state = self.state[p]
        state.setdefault("step", 0)
        for name in self._live_state_names(group):
            if name not in state:
                state[name] = torch.zeros_like(p, memory_format=torch.contiguous_format)

    def _grad_divisor(self, grad: torch.Tensor) -> torch.Tensor:
        if not self.use_global_grad_norm:
            return torch.ones((), device=grad.device)
        grads = [g for g in self.get_combined_grads() if g is not None]
        norms = torch.stack([torch.linalg.vector_norm(g, 2.0, dtype=torch.float32) for g in grads])
        return torch.linalg.vector_norm(norms, 2.0).clamp_min_(1.0)

    def _trust_ratios(self, states: PartStates, param: torch.Tensor, adam_step: torch.Tensor) -> torch.Tensor:
        sizes = [p.numel() for p in states.params]
        weight_norms = torch.stack([torch.linalg.vector_norm(v, 2.0, dtype=torch.float32)
                                    for v in param.split(sizes)]).clamp_(0.0, 10.0)
        step_norms = torch.stack([torch.linalg.vector_norm(v, 2.0) for v in adam_step.split(sizes)])
        ratios = torch.where(weight_norms * step_norms == 0, torch.ones_like(weight_norms), weight_norms / step_norms)
        # The index of the parameter each element belongs to, made once per part on the device.
        segment_ids = getattr(states, "segment_ids", None)
        if segment_ids is None:
            segment_ids = torch.cat([torch.full((n,), i, dtype=torch.int64) for i, n in enumerate(sizes)])
            states.segment_ids = segment_ids = segment_ids.to(param.device)
        return ratios.index_select(0, segment_ids)

    def _update_part(self, group: dict[str, Any], step: int, param: torch.Tensor, grad: torch.Tensor,
                     states: PartStates) -> None:
        beta1, beta2 = group["betas"]
        (adam_step,) = self._step_in_place(
            "_npu_fused_lamb_moments", [param, grad, states["exp_avg"], states["exp_avg_sq"], self._grad_divisor(grad)],
            [beta1, beta2, group["eps"], group["weight_decay"]], [2, 3, -1])
        # In place: float32 arithmetic, rounded once to the parameter's dtype.
        if self.adam:
            param.add_(adam_step, alpha=-group["lr"])
        else:
            param.addcmul_(self._trust_ratios(states, param, adam_step), adam_step, value=-group["lr"])
