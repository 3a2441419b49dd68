"""Core limits per device and per stream: torch_npu's ``set_device_limit`` family.

On Ascend hardware these cap how many cube (AIC) and vector (AIV) cores a kernel of the
device / stream may occupy (aclrtSetDeviceResLimit / aclrtSetStreamResLimit). The
simulator records and validates them and the getters report them, but its kernels
are not capped: their block split comes from the compiler's tiling record
(``TORCH_NPU_EAGER_BLOCK_DIM``), and the simulated cores are host threads.
"""

import torch

from torch_npu.npu.devices import _DeviceLike, _get_device_index, get_device_properties
from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["get_device_limit", "get_stream_limit", "reset_stream_limit", "set_device_limit", "set_stream_limit"]

_NOT_SET = -1
_device_limits: dict[int, dict[str, int]] = {}
_stream_limits: dict[tuple[int, int], dict[str, int]] = {}


def _checked(name: str, value: int, maximum: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}\n" + pta_error(ErrCode.TYPE))
    if value != _NOT_SET and not 0 < value <= maximum:
        raise ValueError(f"{name} must be -1 (not set) or in [1, {maximum}], got {value}\n" + pta_error(ErrCode.VALUE))
    return value


def _limits(device: int, cube_num: int, vector_num: int) -> dict[str, int]:
    props = get_device_properties(device)
    return {
        "cube_core_num": _checked("cube_num", cube_num, props.cube_core_num),
        "vector_core_num": _checked("vector_num", vector_num, props.vector_core_num),
    }


def _full(device: int) -> dict[str, int]:
    props = get_device_properties(device)
    return {"cube_core_num": props.cube_core_num, "vector_core_num": props.vector_core_num}


def set_device_limit(device: _DeviceLike, cube_num: int = _NOT_SET, vector_num: int = _NOT_SET) -> None:
    """Record the cube / vector core limit of a device (-1 keeps the current value)."""
    index = _get_device_index(device, optional=True)
    new = _limits(index, cube_num, vector_num)
    current = _device_limits.setdefault(index, _full(index))
    current.update({key: value for key, value in new.items() if value != _NOT_SET})


def get_device_limit(device: _DeviceLike) -> dict[str, int]:
    """Return ``{"cube_core_num": n, "vector_core_num": m}`` of a device (all cores unless limited)."""
    index = _get_device_index(device, optional=True)
    return dict(_device_limits.get(index) or _full(index))


def _stream_key(stream: torch.Stream) -> tuple[int, int]:
    if not isinstance(stream, torch.Stream) or stream.device.type != "npu":
        raise TypeError("stream must be a torch.npu.Stream\n" + pta_error(ErrCode.TYPE))
    return stream.device_index, stream.stream_id


def set_stream_limit(stream: torch.Stream, cube_num: int = _NOT_SET, vector_num: int = _NOT_SET) -> None:
    """Record the cube / vector core limit of a stream (-1 keeps the current value)."""
    key = _stream_key(stream)
    new = _limits(key[0], cube_num, vector_num)
    current = _stream_limits.setdefault(key, get_device_limit(key[0]))
    current.update({name: value for name, value in new.items() if value != _NOT_SET})


def get_stream_limit(stream: torch.Stream) -> dict[str, int]:
    """Return the stream's limits (its device's until :func:`set_stream_limit`)."""
    key = _stream_key(stream)
    return dict(_stream_limits.get(key) or get_device_limit(key[0]))


def reset_stream_limit(stream: torch.Stream) -> None:
    """Drop the stream's own limits: it follows its device's again."""
    _stream_limits.pop(_stream_key(stream), None)
