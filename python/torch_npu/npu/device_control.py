"""Device control with torch_npu's semantics: stopping and restarting a device, the operator
execution timeout, and how busy a device is (``torch.npu.utilization``)."""

from torch_npu import _C
from torch_npu.npu.devices import _DeviceLike, _get_device_index
from torch_npu.npu.initialization import _lazy_init
from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["restart_device", "set_op_timeout_ms", "stop_device", "utilization"]


def _device_id(device_id: object, caller: str) -> int:
    if isinstance(device_id, bool) or not isinstance(device_id, int):
        raise TypeError(f"{caller}: device_id must be an int, got {type(device_id).__name__}\n"
                        + pta_error(ErrCode.TYPE))
    _lazy_init()
    return _get_device_index(device_id)


def stop_device(device_id: int) -> int:
    r"""Stop the computation on ``device_id``, as torch_npu's ``stop_device`` (used by
    fault-tolerant training to halt a device before repairing it).

    Work queued on the device's streams and not yet started is dropped; a kernel already
    running stops at its next block boundary (its blocks not yet started are skipped; a
    block that is running finishes, as compiled code never polls). Until :func:`restart_device`, queuing work on the device raises a
    RuntimeError naming ``restart_device`` (ACL error 107022, ERR00100), and synchronizing a
    stream whose work was dropped raises it once. Other devices are not affected.

    Returns:
        int: 0 on success, as torch_npu.
    """
    _C._npu_stop_device(_device_id(device_id, "stop_device"))
    return 0


def restart_device(device_id: int, rebuild_all_resource: bool = False) -> None:
    r"""Make ``device_id`` usable again after :func:`stop_device` (harmless on a running device).

    Waits for the device's streams, clears the errors the dropped work left on them, and lets
    new work run. Tensors on the device keep their memory and contents.

    Args:
        device_id (int): the device.
        rebuild_all_resource (bool): reserved, as in torch_npu; it has no effect.
    """
    if not isinstance(rebuild_all_resource, bool):
        raise TypeError("restart_device: rebuild_all_resource must be a bool\n" + pta_error(ErrCode.TYPE))
    _C._npu_restart_device(_device_id(device_id, "restart_device"))


def set_op_timeout_ms(timeout_ms: int) -> None:
    r"""Set the operator execution timeout, in milliseconds (CANN's
    ``aclrtSetOpExecuteTimeOutWithMs``).

    A kernel that runs longer stops starting blocks and fails: the next synchronizing call on
    its stream (``synchronize()``, ``.cpu()``, ``.item()``) raises a RuntimeError carrying ACL
    error 507014 (``ran past the operator execution timeout``). ``0`` removes the limit (the
    default). Applies to kernels launched afterwards.
    """
    if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int):
        raise TypeError(f"set_op_timeout_ms: timeout_ms must be an int, got {type(timeout_ms).__name__}\n"
                        + pta_error(ErrCode.TYPE))
    if not 0 <= timeout_ms < 2**32:
        raise ValueError(f"set_op_timeout_ms: timeout_ms must be in [0, 2**32), got {timeout_ms}\n"
                         + pta_error(ErrCode.VALUE))
    _C._npu_set_op_timeout_ms(timeout_ms)


def utilization(device: _DeviceLike = None) -> int:
    r"""Percent of the last 100 ms during which at least one stream of ``device`` was running
    a task (a kernel, copy, host function or event wait), as torch.cuda.utilization reports
    the share of its sample period with a kernel running. The runtime logs busy time from
    the first call on (it costs a lock per task), so the first answer covers only the time since.

    Args:
        device (torch.device or int, optional): the device; the current one if ``None``.
    """
    _lazy_init()
    return _C._npu_utilization(_get_device_index(device, optional=True))
