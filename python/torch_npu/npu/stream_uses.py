"""``torch_npu.erase_stream``: undo ``Tensor.record_stream``."""

import torch

from torch_npu import _C
from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["erase_stream"]


def erase_stream(tensor: torch.Tensor, stream: torch.Stream) -> None:
    """Forget that ``tensor``'s memory is used on ``stream`` (recorded by ``tensor.record_stream(stream)``).

    Once freed, the block is then reusable without waiting for ``stream``'s queued work:
    call it only when that work no longer reads or writes the tensor.
    """
    if not isinstance(tensor, torch.Tensor) or tensor.device.type != "npu":
        raise TypeError("erase_stream expects an npu tensor\n" + pta_error(ErrCode.TYPE))
    if not isinstance(stream, torch.Stream) or stream.device.type != "npu":
        raise TypeError("erase_stream expects a torch.npu.Stream\n" + pta_error(ErrCode.TYPE))
    _C._npu_erase_stream(tensor.untyped_storage().data_ptr(), stream.stream_id, stream.device_index)
