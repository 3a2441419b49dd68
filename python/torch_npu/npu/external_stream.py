"""``torch.npu.ExternalStream``: a Stream object for an ``aclrtStream`` handle made elsewhere."""

from typing import Any

from torch_npu import _C
from torch_npu.npu.streams import Stream

__all__ = ["ExternalStream"]


class ExternalStream(Stream):
    r"""Wrap a raw ``aclrtStream`` handle (e.g. another stream's ``npu_stream``) as a Stream.

    Args:
        stream_ptr (int): the handle. It must be a stream of this process's runtime
            (ValueError with ERR00003 otherwise); the wrapper does not own it.
        device (torch.device or int, optional): accepted for torch.cuda compatibility;
            the handle's own device is used.
    """

    def __new__(cls, stream_ptr: int, device: Any = None, **kwargs: Any) -> "ExternalStream":
        stream_id, device_index, device_type = _C._npu_stream_from_handle(stream_ptr)
        return super().__new__(cls, stream_id=stream_id, device_index=device_index, device_type=device_type)
