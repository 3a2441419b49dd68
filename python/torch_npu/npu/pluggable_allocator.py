"""``NPUPluggableAllocator`` / ``change_current_allocator``: device memory from a user's library.

As torch.cuda's ``CUDAPluggableAllocator``: a shared library exports

    void* alloc_fn(size_t size, int device, aclrtStream stream);
    void  free_fn(void* ptr, size_t size, int device, aclrtStream stream);

and ``change_current_allocator`` routes every NPU tensor allocation of the process to
them. It must run before the first NPU allocation (the caching allocator's blocks
cannot change hands); afterwards it raises RuntimeError with ERR00007. The memory
must be host memory the process can read and write: the simulated device is the host.
"""

import ctypes

from torch_npu import _C
from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["NPUPluggableAllocator", "change_current_allocator", "get_allocator_backend"]


class NPUPluggableAllocator:
    """An allocator loaded from ``path_to_so_file`` (its ``alloc_fn_name`` / ``free_fn_name`` symbols)."""

    def __init__(self, path_to_so_file: str, alloc_fn_name: str, free_fn_name: str):
        for name, value in (("path_to_so_file", path_to_so_file), ("alloc_fn_name", alloc_fn_name),
                            ("free_fn_name", free_fn_name)):
            if not isinstance(value, str):
                raise TypeError(f"{name} must be a str, got {type(value).__name__}\n" + pta_error(ErrCode.TYPE))
        try:
            self._library = ctypes.CDLL(path_to_so_file)
        except OSError as error:
            raise ValueError(f"cannot load {path_to_so_file}: {error}\n" + pta_error(ErrCode.VALUE)) from error
        try:
            self._alloc = ctypes.cast(getattr(self._library, alloc_fn_name), ctypes.c_void_p).value
            self._free = ctypes.cast(getattr(self._library, free_fn_name), ctypes.c_void_p).value
        except AttributeError as error:
            raise ValueError(f"{path_to_so_file} lacks a symbol: {error}\n" + pta_error(ErrCode.NOT_FOUND)) from error


def change_current_allocator(allocator: NPUPluggableAllocator) -> None:
    """Route NPU allocations to ``allocator``; only before the first NPU allocation."""
    if not isinstance(allocator, NPUPluggableAllocator):
        raise TypeError("allocator must be a torch.npu.memory.NPUPluggableAllocator\n" + pta_error(ErrCode.TYPE))
    _C._npu_change_allocator(allocator._alloc, allocator._free)
    _keep_alive.append(allocator)  # its library must stay loaded while blocks exist


_keep_alive: list[NPUPluggableAllocator] = []


def get_allocator_backend() -> str:
    """``"native"`` (the caching allocator) or ``"pluggable"`` after :func:`change_current_allocator`."""
    return _C._npu_allocator_backend()
