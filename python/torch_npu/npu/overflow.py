"""Overflow detection with torch_npu's modes on a 910B (``torch_npu.npu.utils`` re-exports these).

A 910B runs in one of two modes, chosen by the environment at device initialization:

- **INF_NAN mode** (the default): results follow IEEE 754, so an overflow gives inf and 0/0
  gives nan. The status register is off: :func:`get_npu_overflow_flag` raises (ERR00007) and
  :func:`clear_npu_overflow_flag` warns, as torch_npu does there; :func:`npu_check_overflow`
  looks for inf/nan in the tensor it is given. ``FORCE_OVERFLOW_CHECK=1`` (torch_npu with
  CANN 9.1) arms the register in this mode: the flag functions work and
  :func:`npu_check_overflow` reads (and clears) the flag.
- **Saturation mode** (``INF_NAN_MODE_FORCE_DISABLE=1``): an overflow saturates to the dtype's
  max and nan becomes 0, and every overflow sets the device's sticky flag. ``INF_NAN_MODE_ENABLE=0``
  without it is refused, as torch_npu refuses it on a 910B.

The simulated register is a scan of each op's float results beside its kernel
(csrc/npu/OverflowCheck.h): it covers eager kernels, multi-tensor kernels and CPU-fallback
ops, not the kernels of compiled or captured graphs.
"""

import math
import os
import warnings

import torch

from torch_npu import _C
from torch_npu.npu.devices import _DeviceLike, _get_device_index
from torch_npu.npu.initialization import _lazy_call, _lazy_init
from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = [
    "clear_npu_overflow_flag", "get_npu_overflow_flag", "is_force_overflow_check", "is_support_inf_nan", "npu_check_overflow",
]


def _set_mode_from_environment() -> None:
    saturation = os.environ.get("INF_NAN_MODE_FORCE_DISABLE") == "1"
    if os.environ.get("INF_NAN_MODE_ENABLE") == "0" and not saturation:
        raise RuntimeError("INF_NAN_MODE_ENABLE shouldn't be set to 0 on the current device (Ascend910B). If you want "
                           "to disable inf-nan mode, please export INF_NAN_MODE_FORCE_DISABLE=1\n"
                           + pta_error(ErrCode.PARAM))
    _C._npu_set_overflow_mode(saturation, os.environ.get("FORCE_OVERFLOW_CHECK") == "1")


_lazy_call(_set_mode_from_environment)  # at the first npu use, as torch_npu reads it when it sets up the device


def is_support_inf_nan() -> bool:
    r"""True in INF_NAN mode (the 910B's default), False in saturation mode."""
    _lazy_init()
    return _C._npu_is_support_inf_nan()


def is_force_overflow_check() -> bool:
    r"""Whether ``FORCE_OVERFLOW_CHECK=1`` armed the status flag in INF_NAN mode."""
    _lazy_init()
    return _C._npu_is_support_inf_nan() and _C._npu_overflow_check_enabled()


def get_npu_overflow_flag(device: _DeviceLike = None) -> bool:
    r"""Whether an op on ``device`` overflowed since the flag was last cleared (waits for its queued work).

    Only where the status flag is armed (saturation mode, or ``FORCE_OVERFLOW_CHECK=1``); in the
    default INF_NAN mode it raises, as torch_npu does on a 910B.
    """
    _lazy_init()
    if not _C._npu_overflow_check_enabled():
        raise RuntimeError("Unsupported api when soc_version >= Ascend910B1, please use npu_check_overflow (in INF_NAN "
                           "mode results carry inf/nan; export FORCE_OVERFLOW_CHECK=1 before the first npu op to arm "
                           "the overflow flag)\n" + pta_error(ErrCode.NOT_SUPPORT))
    return _C._npu_get_overflow_flag(_get_device_index(device, optional=True))


def clear_npu_overflow_flag(device: _DeviceLike = None) -> None:
    r"""Clear ``device``'s overflow flag after its queued work has run; in INF_NAN mode a warning only."""
    _lazy_init()
    if not _C._npu_overflow_check_enabled():
        warnings.warn("When soc_version >= Ascend910B1, clear_npu_overflow_flag is useless, please remove it.",
                      stacklevel=2)
        return
    _C._npu_clear_overflow_flag(_get_device_index(device, optional=True))


def npu_check_overflow(grad: torch.Tensor | float) -> bool:
    r"""Whether ``grad`` overflowed: in INF_NAN mode, whether it holds inf/nan; where the flag is
    armed, the flag itself (``grad`` is not looked at), cleared when it was set."""
    _lazy_init()
    if _C._npu_overflow_check_enabled():
        overflowed = get_npu_overflow_flag()
        if overflowed:
            clear_npu_overflow_flag()
        return overflowed
    if isinstance(grad, float):
        total = grad
    elif isinstance(grad, torch.Tensor):
        total = float(grad.float().sum())
    else:
        raise TypeError(f"npu_check_overflow: grad must be a Tensor or a float, got {type(grad).__name__}\n"
                        + pta_error(ErrCode.TYPE))
    return math.isinf(total) or math.isnan(total)
