"""Device selection and queries: torch.cuda's device functions for the NPU."""

from dataclasses import dataclass
from typing import Any

import torch

from torch_npu import _C
from torch_npu.npu.initialization import _lazy_init
from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = [
    "current_device",
    "device",
    "device_count",
    "device_of",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "is_available",
    "set_device",
    "synchronize",
]

_DeviceLike = torch.device | str | int | None


def _get_device_index(device: _DeviceLike, optional: bool = False, allow_cpu: bool = False) -> int:
    """Return the NPU index ``device`` names, with torch.cuda's ``_get_device_index`` semantics.

    ``None`` (with ``optional``) or an index-less ``"npu"`` is the current device; a CPU
    device gives -1 when ``allow_cpu``; an ``npu`` Stream/Event-like object with a
    ``device_index`` gives that index.
    """
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if allow_cpu and device.type == "cpu":
            return -1
        if device.type != "npu":
            raise ValueError(f"Expected a npu device, but got: {device}\n" + pta_error(ErrCode.PARAM))
        if device.index is None and optional:
            return current_device()
        device = device.index
    elif device is not None and not isinstance(device, int) and hasattr(device, "device_index"):
        device = device.device_index
    if device is None:
        if not optional:
            raise ValueError("Expected an npu device with a specified index, or an integer\n" + pta_error(ErrCode.PARAM))
        return current_device()
    if not isinstance(device, int):
        raise TypeError(f"Invalid device {device!r}: expected int, str or torch.device\n" + pta_error(ErrCode.TYPE))
    return device


def is_available() -> bool:
    r"""Return whether an NPU is visible. Does not initialize the device."""
    return _C._npu_device_count() > 0


def device_count() -> int:
    r"""Return the number of visible NPUs. Does not initialize the device."""
    return _C._npu_device_count()


def current_device() -> int:
    r"""Return the index of the currently selected NPU of this thread."""
    _lazy_init()
    return _C._npu_get_device()


def set_device(device: _DeviceLike) -> None:
    r"""Set the current NPU of this thread.

    Args:
        device (torch.device or int or str): the device; a negative index does nothing.
    """
    idx = _get_device_index(device)
    if idx >= 0:
        _lazy_init()
        _C._npu_set_device(idx)


class device:
    r"""Context manager that changes the selected NPU.

    Args:
        device (torch.device or int or str): device index to select. Does nothing if
            it is a negative integer or ``None``.
    """

    def __init__(self, device: Any):
        self.idx = -1 if device is None else _get_device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx < 0:
            return
        _lazy_init()
        self.prev_idx = _C._npu_get_device()
        if self.prev_idx != self.idx:
            _C._npu_set_device(self.idx)

    def __exit__(self, *args: object) -> None:
        if self.idx >= 0 and self.prev_idx != self.idx:
            _C._npu_set_device(self.prev_idx)


class device_of(device):
    r"""Context manager that selects the NPU of the given tensor.

    Args:
        obj (Tensor): a tensor; if it is not on an NPU this does nothing.
    """

    def __init__(self, obj: torch.Tensor):
        super().__init__(obj.get_device() if obj.device.type == "npu" else -1)


def synchronize(device: _DeviceLike = None) -> None:
    r"""Wait for all work queued on every stream of an NPU to complete.

    Args:
        device (torch.device or int or str, optional): device to wait for; the current
            device if ``None`` (default). Blocks the calling thread; raises the first
            error a task on those streams recorded.
    """
    _lazy_init()
    _C._npu_synchronize(_get_device_index(device, optional=True))


@dataclass(frozen=True)
class _NpuDeviceProperties:
    """Properties of one simulated Ascend NPU (sizes in bytes)."""

    name: str
    total_memory: int
    cube_core_num: int
    vector_core_num: int
    L2_cache_size: int
    l1_size: int
    l0a_size: int
    l0b_size: int
    l0c_size: int
    ub_size: int
    cube_freq_ghz: float
    uuid: str

    def __repr__(self) -> str:
        return (
            f"_NpuDeviceProperties(name='{self.name}', total_memory={self.total_memory // (1024 * 1024)}MB, "
            f"cube_core_num={self.cube_core_num}, vector_core_num={self.vector_core_num}, "
            f"L2_cache_size={self.L2_cache_size // (1024 * 1024)}MB)"
        )


def get_device_properties(device: _DeviceLike = None) -> _NpuDeviceProperties:
    r"""Return the properties of an NPU.

    Args:
        device (torch.device or int or str, optional): the device; the current device
            if ``None`` (default).
    """
    _lazy_init()
    idx = _get_device_index(device, optional=True)
    return _NpuDeviceProperties(**_C._npu_get_device_properties(idx))


def get_device_name(device: _DeviceLike = None) -> str:
    r"""Return the name of an NPU (``"Ascend910B1"``); the current device if ``device`` is ``None``."""
    return get_device_properties(device).name


def get_device_capability(device: _DeviceLike = None) -> None:
    r"""Return ``None``: CANN has no compute-capability concept (torch_npu returns ``None`` too).

    Args:
        device (torch.device or int or str, optional): validated, otherwise unused.
    """
    _lazy_init()
    _C._npu_check_device(_get_device_index(device, optional=True))
    return None
