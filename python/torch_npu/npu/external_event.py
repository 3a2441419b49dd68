"""``torch_npu.npu.ExternalEvent``: CANN's notify-style event, for ordering work around NPUGraph."""

import torch

from torch_npu import _C
from torch_npu.npu.initialization import _lazy_init
from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["ExternalEvent"]


class ExternalEvent:
    r"""An event whose :meth:`wait` blocks a stream until a :meth:`record` reaches it.

    Unlike :class:`torch.npu.Event` (where waiting on an event not recorded yet is a no-op),
    a wait may be queued before the matching record, on another stream: the waiting stream
    stops there until the recording stream gets to the record. A wait consumes the record;
    :meth:`reset` clears a record nobody waited for. torch_npu uses these as nodes outside a
    captured NPUGraph to order it against work that is not in the graph.

    Each method queues a task on the given stream and returns at once.
    """

    def __init__(self) -> None:
        _lazy_init()
        self._event = _C._NPUExternalEvent()

    @staticmethod
    def _triple(stream: torch.Stream, caller: str) -> tuple[int, int, int]:
        if not isinstance(stream, torch.Stream):
            raise TypeError(f"ExternalEvent.{caller}: stream must be a torch_npu.npu.Stream, got "
                            f"{type(stream).__name__}\n" + pta_error(ErrCode.TYPE))
        return stream.stream_id, stream.device_index, stream.device_type

    def record(self, stream: torch.Stream) -> None:
        r"""Mark the event on ``stream``: waiters proceed once ``stream`` has run what was queued before."""
        self._event.record(*self._triple(stream, "record"))

    def wait(self, stream: torch.Stream) -> None:
        r"""Make ``stream`` wait, at this point, until the event is recorded; the wait resets it."""
        self._event.wait(*self._triple(stream, "wait"))

    def reset(self, stream: torch.Stream) -> None:
        r"""Clear a record on ``stream``'s turn, so a later wait waits for the next record."""
        self._event.reset(*self._triple(stream, "reset"))
