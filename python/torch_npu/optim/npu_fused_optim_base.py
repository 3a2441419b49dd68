"""NpuFusedOptimizerBase: the combined-buffer machinery the fused optimizers share (torch_npu's API).

On the first step, every parameter that has a gradient is moved into one contiguous buffer per dtype,
and so is its gradient (torch_npu.utils.npu_combine_tensors); each optimizer's states follow, one
buffer per (param group, dtype). A step is then one compiled kernel per (group, dtype) over those
buffers - not launches per parameter. Parameters keep their identity: a Parameter's storage points
into the buffer, so the model sees every update and autograd accumulates straight into the combined
gradients. Parameters without a gradient at the first step are not combined and never stepped (as in
torch_npu); zero_grad zeroes the combined gradients in place, which is why set_to_none is refused.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable

import torch
from torch.optim.optimizer import Optimizer

from torch_npu.utils.combined_tensors import get_part_combined_tensor, npu_change_data_ptr, npu_combine_tensors
from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["NpuFusedOptimizerBase", "PartStates"]

# One combined buffer per dtype, in this order (torch_npu has float32 and float16; bfloat16 works here too).
COMBINED_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


class PartStates(dict):
    """One (param group, dtype) part's combined state buffers by name, and the parameters they hold, in order."""

    def __init__(self, params: list[torch.nn.Parameter], buffers: dict[str, torch.Tensor]):
        super().__init__(buffers)
        self.params = params


class NpuFusedOptimizerBase(Optimizer):
    r"""Base of torch_npu's fused optimizers: combines parameters, gradients and states per dtype.

    Subclasses name a group's per-parameter states (``_live_state_names``), initialise them
    (``_init_param_state``) and update one (group, dtype) part of the buffers (``_update_part``).
    """

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]):
        super().__init__(params, defaults)
        self.is_fused_optimizer = True
        self.is_params_grads_combined = False
        self.is_states_combined = False
        # Per dtype of COMBINED_DTYPES: the combined buffer, or None when no parameter has that dtype.
        self.params_all_group_combined: list[torch.Tensor | None] = [None] * len(COMBINED_DTYPES)
        self.grads_all_group_combined: list[torch.Tensor | None] = [None] * len(COMBINED_DTYPES)
        # Per group, per dtype: the combined parameters, their views of the buffers, and the state buffers.
        self.params_lists_indexed_by_group: list[list[list[torch.nn.Parameter]]] = []
        self.combined_params_indexed_by_group: list[list[torch.Tensor | None]] = []
        self.combined_grads_indexed_by_group: list[list[torch.Tensor | None]] = []
        self.combined_param_states_indexed_by_group: list[list[PartStates | None]] = []

    # ----------------------------------------------------------------------------------------- combine
    def _dtype_index(self, p: torch.Tensor) -> int:
        if p.dtype not in COMBINED_DTYPES:
            raise TypeError(f"{type(self).__name__}'s parameters must be float32, float16 or bfloat16, but "
                            f"received {p.dtype} " + pta_error(ErrCode.TYPE))
        if p.device.type != "npu":
            raise RuntimeError(f"{type(self).__name__} steps NPU parameters, got one on {p.device}; move the model "
                               "with .npu() before creating the optimizer " + pta_error(ErrCode.PARAM))
        return COMBINED_DTYPES.index(p.dtype)

    @torch.no_grad()
    def _maybe_init_combined_params_and_grads(self) -> None:
        if self.is_params_grads_combined:
            return
        per_group = []
        for group in self.param_groups:
            lists: list[list[torch.nn.Parameter]] = [[] for _ in COMBINED_DTYPES]
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.grad.is_sparse:
                    raise RuntimeError(f"{type(self).__name__} does not support sparse gradients "
                                       + pta_error(ErrCode.NOT_SUPPORT))
                lists[self._dtype_index(p)].append(p)
            per_group.append(lists)
        if not any(lst for lists in per_group for lst in lists):
            return  # no gradient yet: nothing to combine
        for p in (p for lists in per_group for lst in lists for p in lst):
            # Element i of a combined gradient must be the gradient of element i of the combined parameter.
            if not p.is_contiguous():
                raise RuntimeError(f"{type(self).__name__} combines parameters into one buffer, but a parameter of "
                                   f"shape {tuple(p.shape)} is not contiguous; give the optimizer contiguous "
                                   "parameters " + pta_error(ErrCode.PARAM))
            if not p.grad.is_contiguous():
                p.grad = p.grad.clone(memory_format=torch.contiguous_format)
        for d in range(len(COMBINED_DTYPES)):
            params = [p for lists in per_group for p in lists[d]]
            self.params_all_group_combined[d] = npu_combine_tensors(params)
            self.grads_all_group_combined[d] = npu_combine_tensors([p.grad for p in params])
        # Each group's part of a buffer is a view: groups were combined in order.
        offsets = [0] * len(COMBINED_DTYPES)
        self.params_lists_indexed_by_group = per_group
        self.combined_params_indexed_by_group, self.combined_grads_indexed_by_group = [], []
        for lists in per_group:
            group_params, group_grads = [], []
            for d, params in enumerate(lists):
                size = sum(p.numel() for p in params)
                group_params.append(get_part_combined_tensor(self.params_all_group_combined[d], offsets[d], size))
                group_grads.append(get_part_combined_tensor(self.grads_all_group_combined[d], offsets[d], size))
                offsets[d] += size
            self.combined_params_indexed_by_group.append(group_params)
            self.combined_grads_indexed_by_group.append(group_grads)
        self.is_params_grads_combined = True

    @torch.no_grad()
    def _maybe_init_combined_states(self) -> None:
        if self.is_states_combined or not self.is_params_grads_combined:
            return
        self.combined_param_states_indexed_by_group = []
        for group, lists in zip(self.param_groups, self.params_lists_indexed_by_group):
            group_states: list[PartStates | None] = []
            for params in lists:
                if not params:
                    group_states.append(None)
                    continue
                for p in params:
                    self._init_param_state(p, group)
                names = self._live_state_names(group)
                # Combining copies each state's current values (zeros, or what load_state_dict put there).
                group_states.append(PartStates(params, {name: npu_combine_tensors([self.state[p][name] for p in params])
                                                        for name in names}))
            self.combined_param_states_indexed_by_group.append(group_states)
        self.is_states_combined = True

    def _live_state_names(self, group: dict[str, Any]) -> tuple[str, ...]:
        raise NotImplementedError

    # -------------------------------------------------------------------------------------------- step
    @torch.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        r"""Perform one optimization step: one kernel per (param group, dtype) over the combined buffers.

        Args:
            closure (Callable, optional): re-evaluates the model and returns the loss (default: ``None``).
        """
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self._maybe_init_combined_params_and_grads()
        self._maybe_init_combined_states()
        if not self.is_params_grads_combined:
            return loss
        for index, group in enumerate(self.param_groups):
            params = [p for lst in self.params_lists_indexed_by_group[index] for p in lst]
            if not params:
                continue
            for p in params:
                # int() also takes the CPU tensor torch.optim keeps, when its state dict was loaded.
                self.state[p]["step"] = int(self.state[p].get("step", 0)) + 1
            step = self.state[params[0]]["step"]
            for d in range(len(COMBINED_DTYPES)):
                param = self.combined_params_indexed_by_group[index][d]
                if param is None:
                    continue
                self._update_part(group, step, param, self.combined_grads_indexed_by_group[index][d],
                                  self.combined_param_states_indexed_by_group[index][d])
        return loss

    def _init_param_state(self, p: torch.nn.Parameter, group: dict[str, Any]) -> None:
        raise NotImplementedError

    def _update_part(self, group: dict[str, Any], step: int, param: torch.Tensor, grad: torch.Tensor,
                     states: PartStates) -> None:
        raise NotImplementedError

    @staticmethod
    def _step_in_place(op: str, tensors: list[torch.Tensor], values: list[float | bool],
                       writes: list[int]) -> list[torch.Tensor]:
        """Run the fused step ``npu::<op>`` over one part's buffers in place: one multi-tensor launch,
        result k written into ``tensors[writes[k]]`` (no copy back); returns the results written
        nowhere (``writes[k] == -1``). Arguments in the op's schema order: ``tensors``, then ``values``."""
        return torch.ops.npu._npu_fused_step_(f"npu::{op}", tensors, values, writes)

    @torch.no_grad()
    def zero_grad(self, set_to_none: bool = False) -> None:
        r"""Zero the gradients in place: one kernel per combined gradient buffer.

        Args:
            set_to_none (bool, optional): must stay ``False`` (default): the combined gradients are
                reused in place every step, so dropping them is refused (ValueError), as in torch_npu.
        """
        if set_to_none:
            raise ValueError("set_to_none is not supported in fused optimizers: their gradients live in combined "
                             "buffers reused every step; call zero_grad() " + pta_error(ErrCode.NOT_SUPPORT))
        if not self.is_params_grads_combined:
            self._maybe_init_combined_params_and_grads()
        if not self.is_params_grads_combined:
            super().zero_grad(set_to_none=False)
            return
        for grads in self.grads_all_group_combined:
            if grads is not None:
                grads.zero_()

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        r"""Load a state dict; the combined state buffers are rebuilt from it at the next step.

        torch.optim replaces every state tensor; re-combining them keeps the buffers the kernels
        update and the tensors ``state_dict()`` returns one and the same (torch_npu leaves them apart).
        """
        super().load_state_dict(state_dict)
        self.is_states_combined = False
        self.combined_param_states_indexed_by_group = []

    # ------------------------------------------------------------------------------------ combined API
    def get_combined_params(self) -> list[torch.Tensor | None]:
        r"""The combined parameter buffer per dtype (float32, float16, bfloat16; ``None`` where unused)."""
        return self.params_all_group_combined

    def get_combined_grads(self) -> list[torch.Tensor | None]:
        r"""The combined gradient buffer per dtype (float32, float16, bfloat16; ``None`` where unused)."""
        return self.grads_all_group_combined

    @torch.no_grad()
    def clip_grad_norm_fused_(self, max_norm: float, norm_type: float = 2.0) -> torch.Tensor:
        r"""Clip the gradients' total norm to ``max_norm`` over the combined buffers; return the norm.

        As ``torch.nn.utils.clip_grad_norm_`` (coefficient ``max_norm / (norm + 1e-6)``, at most 1), with
        a few kernels per dtype and no device-to-host copy.

        Args:
            max_norm (float): the largest norm the gradients keep.
            norm_type (float, optional): the p of the p-norm; ``inf`` for the max norm (default: 2).
        """
        self._maybe_init_combined_params_and_grads()
        grads = [g for g in self.grads_all_group_combined if g is not None]
        if not grads:
            return torch.tensor(0.0)
        norm_type = float(norm_type)
        norms = [torch.linalg.vector_norm(g, norm_type, dtype=torch.float32) for g in grads]
        if len(norms) == 1:
            total = norms[0]
        elif norm_type == math.inf:
            total = torch.stack(norms).amax()
        else:
            total = torch.linalg.vector_norm(torch.stack(norms), norm_type)
        coef = (float(max_norm) / (total + 1e-6)).clamp_(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype))
        return total
