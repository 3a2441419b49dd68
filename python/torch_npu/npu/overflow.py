"""Overflow flags: ``torch.npu.get_npu_overflow_flag`` / ``clear_npu_overflow_flag``.

On a 910B in saturation mode an overflowing AI-core op sets a status bit of its device. The
simulated device checks beside the kernels instead (csrc/npu/OverflowCheck.h): while armed,
every compiled kernel's floating-point results are scanned for inf/nan on the kernel's stream,
right after it, and one found sets the device's sticky flag. Scanning costs a pass over each
float result, so it is armed by the first call of either function (the loss-scaler pattern:
clear, run the step, read), or explicitly by :func:`set_overflow_check`. Ops that run on the
CPU fallback are not scanned.
"""

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

    Waits for the device's queued work first. The first call arms the check (see the module
    docstring): kernels launched before it are not scanned.
    """
    _lazy_init()
    _C._npu_set_overflow_check(True)
    return _C._npu_get_overflow_flag(_get_device_index(device, optional=True))


def clear_npu_overflow_flag(device: _DeviceLike = None) -> None:
    r"""Clear ``device``'s overflow flag, after its queued work has run, and arm the check."""
    _lazy_init()
    _C._npu_set_overflow_check(True)
    _C._npu_clear_overflow_flag(_get_device_index(device, optional=True))
