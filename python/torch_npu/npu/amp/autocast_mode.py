"""Autocast on the NPU: torch.amp with ``device_type="npu"``, under torch_npu's names.

The cast policy is registered in C++ (csrc/aten/Autocast.cpp): matmul/linear/conv/attention in the
lower precision, exp/log/pow, norms, softmax and losses in float32, mixed inputs promoted.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import torch
from typing_extensions import deprecated

from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = [
    "autocast",
    "custom_bwd",
    "custom_fwd",
    "get_amp_supported_dtype",
    "get_autocast_dtype",
    "is_autocast_enabled",
    "is_bf16_supported",
    "set_autocast_dtype",
    "set_autocast_enabled",
]


def get_amp_supported_dtype() -> list[torch.dtype]:
    r"""Return the dtypes autocast can use on the NPU: float16 and bfloat16."""
    return [torch.float16, torch.bfloat16]


def is_bf16_supported() -> bool:
    r"""Return ``True``: the NPU (Ascend 910B) computes in bfloat16."""
    return True


def is_autocast_enabled() -> bool:
    r"""Return whether autocast is on for the NPU in this thread (``torch.is_autocast_enabled("npu")``)."""
    return torch.is_autocast_enabled("npu")


def set_autocast_enabled(enabled: bool) -> None:
    r"""Turn NPU autocast on or off for this thread; prefer the :class:`autocast` context manager."""
    torch.set_autocast_enabled("npu", enabled)


def get_autocast_dtype() -> torch.dtype:
    r"""Return the lower-precision dtype NPU autocast casts to (float16 unless set)."""
    return torch.get_autocast_dtype("npu")


def set_autocast_dtype(dtype: torch.dtype) -> None:
    r"""Set the lower-precision dtype NPU autocast casts to: ``torch.float16`` or ``torch.bfloat16``."""
    if dtype not in get_amp_supported_dtype():
        raise ValueError(f"NPU autocast supports {get_amp_supported_dtype()}, got {dtype}; pass torch.float16 or "
                         "torch.bfloat16 " + pta_error(ErrCode.TYPE))
    torch.set_autocast_dtype("npu", dtype)


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


@deprecated("`torch.npu.amp.custom_fwd(args...)` is deprecated. "
            "Please use `torch.amp.custom_fwd(args..., device_type='npu')` instead.", category=FutureWarning)
def custom_fwd(fwd: Callable | None = None, *, cast_inputs: torch.dtype | None = None) -> Any:
    r"""``torch.amp.custom_fwd(device_type="npu")``: run a custom autograd Function's forward under NPU autocast."""
    return functools.partial(torch.amp.custom_fwd, device_type="npu")(fwd=fwd, cast_inputs=cast_inputs)


@deprecated("`torch.npu.amp.custom_bwd(args...)` is deprecated. "
            "Please use `torch.amp.custom_bwd(args..., device_type='npu')` instead.", category=FutureWarning)
def custom_bwd(bwd: Callable) -> Callable:
    r"""``torch.amp.custom_bwd(device_type="npu")``: run the backward with the forward's autocast state."""
    return functools.partial(torch.amp.custom_bwd, device_type="npu")(bwd)
