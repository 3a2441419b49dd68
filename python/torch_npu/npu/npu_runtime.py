"""``torch_npu.npu.npurt()``: the runtime calls torch_npu's tests reach through ctypes-style
handles, as ``torch.cuda.cudart()`` exposes the CUDA runtime."""

import ctypes

import torch

from torch_npu import _C
from torch_npu.npu.initialization import _lazy_init

__all__ = ["npurt"]

ACL_SUCCESS = 0
ACL_ERROR_INVALID_PARAM = 100000
# The simulated runtime cannot pin memory it did not allocate (aclrtMallocHost / pin_memory can).
ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000


class _NpuRuntime:
    r"""Runtime entry points with ACL's return convention: an int, 0 on success."""

    def npuStreamCreate(self, stream_ptr_address: int) -> int:  # noqa: N802  (torch_npu's name)
        r"""Write a new stream's ``aclrtStream`` handle to the ``void*`` at ``stream_ptr_address``.

        The runtime's streams are a fixed pool per device (DESIGN.md section 5): this hands out
        the current device's next pool stream, as ``torch.npu.Stream()`` does."""
        if not isinstance(stream_ptr_address, int) or stream_ptr_address == 0:
            return ACL_ERROR_INVALID_PARAM
        handle = torch.npu.Stream().npu_stream
        ctypes.c_void_p.from_address(stream_ptr_address).value = handle
        return ACL_SUCCESS

    def npuStreamDestroy(self, stream: int) -> int:  # noqa: N802
        r"""Release a stream from :meth:`npuStreamCreate`. Pool streams live for the process, so
        this only checks the handle and waits for the stream's work."""
        try:
            torch.npu.ExternalStream(stream).synchronize()
        except (ValueError, RuntimeError):
            return ACL_ERROR_INVALID_PARAM
        return ACL_SUCCESS

    def npuHostRegister(self, ptr: int, size: int, flags: int) -> int:  # noqa: N802
        r"""Page-lock existing host memory. Not supported by the simulated runtime: returns
        ACL's feature-not-supported code (207000); allocate with ``pin_memory()`` instead."""
        return ACL_ERROR_RT_FEATURE_NOT_SUPPORT

    def npuHostUnregister(self, ptr: int) -> int:  # noqa: N802
        r"""Undo :meth:`npuHostRegister`: nothing is ever registered, so not supported either."""
        return ACL_ERROR_RT_FEATURE_NOT_SUPPORT


def npurt() -> _NpuRuntime:
    r"""The NPU runtime's entry points (torch.cuda.cudart's counterpart)."""
    _lazy_init()
    return _NpuRuntime()
