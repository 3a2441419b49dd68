"""Overflow flags: ``torch.npu.get_npu_overflow_flag`` / ``clear_npu_overflow_flag``.

On a 910B in saturation mode an overflowing AI-core op sets a status bit of its device. The
simulated device checks beside the kernels instead (csrc/npu/OverflowCheck.h): while armed,
every compiled kernel's floating-point results are scanned for inf/nan on the kernel's stream,
right after it, and one found sets the device's sticky flag. Scanning costs a pass over each
float result, so it is armed by the first call of either function (the loss-scaler pattern:
clear, run the step, read), explicitly by :func:`set_overflow_check`, or from the start by
``TORCH_NPU_OVERFLOW_CHECK=1``. Ops that run on the CPU fallback are scanned too.

A first :func:`get_npu_overflow_flag` that arms the check cannot know what ran before it (on
a 910B the status bit would have seen it): it warns that those kernels went unscanned.
"""

import warnings

from torch_npu import _C
from torch_npu.npu.devices import _DeviceLike, _get_device_index
from torch_npu.npu.initialization import _lazy_init
from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["clear_npu_overflow_flag", "get_npu_overflow_flag", "set_overflow_check"]


def set_overflow_check(enabled: bool) -> None:
    r"""Arm (or disarm) the scan of compiled kernels' float results for inf/nan."""
    if not isinstance(enabled, bool):
        raise TypeError("set_overflow_check: enabled must be a bool\n" + pta_error(ErrCode.TYPE))
    _C._npu_set_overflow_check(enabled)


def get_npu_overflow_flag(device: _DeviceLike = None) -> bool:
    r"""Whether a kernel on ``device`` produced inf or nan since the flag was last cleared.

    Waits for the device's queued work first. A call that arms the check (see the module
    docstring) warns that kernels launched before it were not scanned.
    """
    _lazy_init()
    if not _C._npu_overflow_check_enabled():
        _C._npu_set_overflow_check(True)
        warnings.warn("torch.npu.get_npu_overflow_flag: the overflow check was off until this call, so kernels "
                      "launched before it were not scanned for inf/nan. Call torch.npu.clear_npu_overflow_flag() "
                      "before the work you check, or set TORCH_NPU_OVERFLOW_CHECK=1 to scan from the start.",
                      stacklevel=2)
    return _C._npu_get_overflow_flag(_get_device_index(device, optional=True))


def clear_npu_overflow_flag(device: _DeviceLike = None) -> None:
    r"""Clear ``device``'s overflow flag, after its queued work has run, and arm the check."""
    _lazy_init()
    _C._npu_set_overflow_check(True)
    _C._npu_clear_overflow_flag(_get_device_index(device, optional=True))
