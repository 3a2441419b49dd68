"""Deterministic execution switches of torch_npu.

The simulator's kernels are deterministic already: each output element is computed
by one block in a fixed order, and reductions are not split over atomics. These
calls set torch's own switches (which also make torch raise on ops without a
deterministic implementation) and record torch_npu's level.
"""

import torch

from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["disable_deterministic_with_backward", "enable_deterministic_with_backward", "get_deterministic_level",
           "set_deterministic_level"]

_level = {"value": 0}


def set_deterministic_level(level: int) -> None:
    """0: off; 1: deterministic ops (``torch.use_deterministic_algorithms(True)``); 2: also fill
    uninitialized memory (``torch.utils.deterministic.fill_uninitialized_memory``)."""
    if not isinstance(level, int) or isinstance(level, bool) or level not in (0, 1, 2):
        raise ValueError(f"deterministic level must be 0, 1 or 2, got {level!r}\n" + pta_error(ErrCode.VALUE))
    torch.use_deterministic_algorithms(level > 0)
    torch.utils.deterministic.fill_uninitialized_memory = level == 2
    _level["value"] = level


def get_deterministic_level() -> int:
    """The level of :func:`set_deterministic_level` (0 by default)."""
    return _level["value"]


def enable_deterministic_with_backward(tensor: torch.Tensor) -> torch.Tensor:
    """Turn torch's deterministic algorithms on, process-wide, and return ``tensor`` unchanged.

    The switch stays on until :func:`disable_deterministic_with_backward`, so the backward
    of the graph built from here runs deterministically too.
    """
    torch.use_deterministic_algorithms(True)
    return tensor


def disable_deterministic_with_backward(tensor: torch.Tensor) -> torch.Tensor:
    """Turn torch's deterministic algorithms off again and return ``tensor`` unchanged."""
    torch.use_deterministic_algorithms(False)
    return tensor
