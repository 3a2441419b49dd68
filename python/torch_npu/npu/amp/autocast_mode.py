"""Autocast and gradient scaling on the NPU: torch.amp with ``device_type="npu"``.

The cast policies are registered in C++ (csrc/aten/Autocast.cpp), the same lists
CUDA uses: matmul/linear/conv in the lower precision, reductions and losses in float32.
"""

from typing import Any

import torch

__all__ = ["GradScaler", "autocast", "get_amp_supported_dtype", "is_bf16_supported"]


def get_amp_supported_dtype() -> list[torch.dtype]:
    r"""Return the dtypes autocast can use on the NPU: float16 and bfloat16."""
    return [torch.float16, torch.bfloat16]


def is_bf16_supported() -> bool:
    r"""Return ``True``: the NPU (Ascend 910B) supports bfloat16."""
    return True


class autocast(torch.amp.autocast_mode.autocast):
    r"""Context manager (and decorator) for mixed precision on the NPU.

    ``torch.npu.amp.autocast(args...)`` is ``torch.autocast("npu", args...)``.

    Args:
        enabled (bool, optional): whether autocasting is on (default: ``True``).
        dtype (torch.dtype, optional): the lower precision (default: ``torch.float16``).
        cache_enabled (bool, optional): cache casted weights (default: ``True``).
    """

    def __init__(self, enabled: bool = True, dtype: torch.dtype = torch.float16, cache_enabled: bool = True):
        super().__init__("npu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)


class GradScaler(torch.amp.GradScaler):
    r"""``torch.npu.amp.GradScaler(args...)`` is ``torch.amp.GradScaler("npu", args...)``.

    Args:
        init_scale (float, optional): initial scale factor (default: ``2.0**16``).
        growth_factor (float, optional): scale growth per stable interval (default: ``2.0``).
        backoff_factor (float, optional): scale shrink on inf/NaN (default: ``0.5``).
        growth_interval (int, optional): stable steps between growths (default: ``2000``).
        enabled (bool, optional): whether scaling is on (default: ``True``).
    """

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__("npu", *args, **kwargs)
