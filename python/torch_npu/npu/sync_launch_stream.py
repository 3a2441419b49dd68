"""``torch_npu.npu.SyncLaunchStream``: a stream whose tasks are not queued but run at once."""

import itertools

from torch_npu import _C
from torch_npu.npu.devices import _DeviceLike, _get_device_index
from torch_npu.npu.initialization import _lazy_init
from torch_npu.npu.streams import Stream, default_stream

__all__ = ["SyncLaunchStream"]

_next_slot = itertools.count()


class SyncLaunchStream(Stream):
    r"""A stream on which every task runs in the calling thread before the call returns,
    instead of going through the stream's task queue (torch_npu's "no taskqueue" launch).

    torch_npu recommends it for saving checkpoints while another device of the job has
    failed: nothing waits in a queue. Launching is slower than on an ordinary stream, and a
    kernel error raises at the launching call. Each device has 4 such streams; creating more
    hands them out again round robin, as in torch_npu.

    Args:
        device (torch.device, str or int, optional): the device ("npu:0", 0, ...); the
            current device if ``None``.
    """

    def __new__(cls, device: _DeviceLike = None) -> "SyncLaunchStream":
        _lazy_init()
        index = _get_device_index(device, optional=True)
        slot = next(_next_slot) % _C._npu_sync_launch_stream_count
        device_type = default_stream(index).device_type
        return super().__new__(cls, stream_id=_C._npu_sync_launch_stream_base + slot, device_index=index,
                               device_type=device_type)
