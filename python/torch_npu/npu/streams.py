"""NPU streams and events.

:class:`Stream` and :class:`Event` subclass torch's generic ``torch.Stream`` and
``torch.Event``, whose methods reach the NPU through the device guard, so
``torch.accelerator`` and code written against the generic classes work on them.
"""

from typing import Any

import torch

from torch_npu import _C
from torch_npu.npu.devices import _DeviceLike, _get_device_index
from torch_npu.npu.devices import device as _device_ctx
from torch_npu.npu.initialization import _lazy_init
from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = [
    "Event",
    "Stream",
    "StreamContext",
    "current_stream",
    "default_stream",
    "get_sync_debug_mode",
    "set_stream",
    "set_sync_debug_mode",
    "stream",
]


class Stream(torch.Stream):
    r"""Wrapper around an NPU stream: a FIFO queue of device work.

    Args:
        device (torch.device or int, optional): a device on which to allocate the
            stream. If ``None`` (default) or a negative integer, the current device.
        priority (int, optional): priority of the stream, 0 (default) or negative;
            negative numbers take a stream from the high-priority pool.

    Streams come from a fixed per-device pool (32 per priority), handed out round robin.
    """

    def __new__(cls, device: _DeviceLike = None, priority: int = 0, **kwargs: Any) -> "Stream":
        if kwargs.get("stream_id") is not None:
            return super().__new__(cls, **kwargs)
        _lazy_init()
        idx = _get_device_index(device, optional=True)
        return super().__new__(cls, device=torch.device("npu", idx), priority=priority)

    def wait_event(self, event: torch.Event) -> None:
        r"""Make all future work submitted to this stream wait for an event.

        Args:
            event (torch.Event): an event to wait for. Returns at once: only the
                stream waits, not the host.
        """
        event.wait(self)

    def wait_stream(self, stream: torch.Stream) -> None:
        r"""Synchronize with another stream: work queued here afterwards runs after all
        work queued on ``stream`` so far. Returns at once.

        Args:
            stream (torch.Stream): the stream to wait for.
        """
        self.wait_event(stream.record_event())

    def record_event(self, event: "Event | None" = None) -> "Event":
        r"""Record an event on this stream and return it.

        Args:
            event (Event, optional): event to record; a new one if ``None`` (default).
        """
        if event is None:
            event = Event()
        event.record(self)
        return event

    @property
    def priority(self) -> int:
        r"""The stream's priority: -1 for the high-priority pool, 0 otherwise."""
        return _C._npu_stream_priority(self.stream_id, self.device_index, self.device_type)

    @property
    def npu_stream(self) -> int:
        r"""The stream's raw ``aclrtStream`` handle, as an integer (torch.cuda's ``cuda_stream``)."""
        return _C._npu_stream_handle(self.stream_id, self.device_index, self.device_type)

    def __repr__(self) -> str:
        return f"<torch_npu.npu.Stream device=npu:{self.device_index} npu_stream={self.npu_stream:#x}>"


class Event(torch.Event):
    r"""Wrapper around an NPU event: a marker in a stream, used to order work and time it.

    Args:
        enable_timing (bool, optional): whether the event records timestamps, needed by
            :meth:`elapsed_time` (default: ``False``).
        blocking (bool, optional): accepted for compatibility with torch.cuda.Event;
            :meth:`synchronize` always blocks the calling thread (default: ``False``).
        interprocess (bool, optional): whether other processes can open the event from
            :meth:`ipc_handle` and order their work after it, as torch.cuda's interprocess
            events; such an event takes no timestamps (default: ``False``).

    The event is created on the device of the stream it is first recorded on (an
    interprocess event: on the current device).
    """

    _ipc = None  # the shared-memory runtime event of an interprocess event

    def __new__(cls, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> "Event":
        event = super().__new__(cls, device="npu", enable_timing=enable_timing, blocking=blocking)
        if interprocess:
            if enable_timing:
                raise ValueError("an interprocess event takes no timestamps: pass enable_timing=False, as with "
                                 "torch.cuda.Event\n" + pta_error(ErrCode.VALUE))
            _lazy_init()
            event._ipc = _C._NpuIpcEvent(_get_device_index(None, optional=True))
        return event

    @classmethod
    def from_ipc_handle(cls, device: _DeviceLike, handle: bytes) -> "Event":
        r"""Open the interprocess event whose :meth:`ipc_handle` another process gave (on ``device``)."""
        _lazy_init()
        event = super().__new__(cls, device="npu")
        event._ipc = _C._NpuIpcEvent(_get_device_index(device, optional=True), handle)
        return event

    def ipc_handle(self) -> bytes:
        r"""Return the bytes another process passes to :meth:`from_ipc_handle` to open this event."""
        if self._ipc is None:
            raise RuntimeError("ipc_handle: the event was not created with interprocess=True\n"
                               + pta_error(ErrCode.PARAM))
        return self._ipc.ipc_handle()

    def record(self, stream: torch.Stream | None = None) -> None:
        r"""Record the event on a stream (the current stream if ``None``, the default). Returns at once."""
        if stream is None:
            stream = current_stream()
        if self._ipc is not None:
            self._ipc.record(stream.stream_id, stream.device_index)
            return
        super().record(stream)

    def wait(self, stream: torch.Stream | None = None) -> None:
        r"""Make work queued on ``stream`` (current if ``None``) afterwards wait for this event. Returns at once.

        For an interprocess event this waits for its latest record in any process.
        """
        if stream is None:
            stream = current_stream()
        if self._ipc is not None:
            self._ipc.wait(stream.stream_id, stream.device_index)
            return
        super().wait(stream)

    def query(self) -> bool:
        r"""Return whether the work the event captured has run (True if never recorded). Does not block."""
        return self._ipc.query() if self._ipc is not None else super().query()

    def synchronize(self) -> None:
        r"""Block the calling thread until the work the event captured has run."""
        if self._ipc is not None:
            self._ipc.synchronize()
            return
        super().synchronize()

    def elapsed_time(self, end_event: torch.Event) -> float:
        r"""Return the milliseconds between this event and ``end_event``.

        Both events must have been created with ``enable_timing=True`` and must have
        completed (call :meth:`synchronize` on ``end_event`` first).
        """
        return _C._npu_event_elapsed_time(self, end_event)

    def __repr__(self) -> str:
        return f"<torch_npu.npu.Event event_id={self.event_id}>"


def _wrap(triple: tuple[int, int, int]) -> Stream:
    stream_id, device_index, device_type = triple
    return Stream(stream_id=stream_id, device_index=device_index, device_type=device_type)


def current_stream(device: _DeviceLike = None) -> Stream:
    r"""Return the currently selected stream of this thread for a device.

    Args:
        device (torch.device or int, optional): the device; the current device if
            ``None`` (default).
    """
    _lazy_init()
    return _wrap(_C._npu_current_stream(_get_device_index(device, optional=True)))


def default_stream(device: _DeviceLike = None) -> Stream:
    r"""Return the default stream of a device (the current device if ``None``, the default)."""
    _lazy_init()
    return _wrap(_C._npu_default_stream(_get_device_index(device, optional=True)))


def set_stream(stream: torch.Stream | None) -> None:
    r"""Make ``stream`` current for its device on this thread, and select that device.

    Usage of this function is discouraged in favor of the ``stream`` context manager.
    Does nothing if ``stream`` is ``None``.
    """
    if stream is None:
        return
    _lazy_init()
    _C._npu_set_device(stream.device_index)
    _C._npu_set_stream(stream.stream_id, stream.device_index, stream.device_type)


class StreamContext:
    r"""Context manager that selects a given stream.

    All NPU work queued within its context goes to the selected stream.

    Args:
        stream (Stream, optional): the stream to select; does nothing if ``None``.
    """

    def __init__(self, stream: torch.Stream | None):
        self.stream = stream
        self.src_prev_stream: Stream | None = None
        self.dst_prev_stream: Stream | None = None

    def __enter__(self) -> None:
        if self.stream is None:
            return
        self.src_prev_stream = current_stream(None)
        # A stream of another device: remember that device's current stream too.
        if self.src_prev_stream.device_index != self.stream.device_index:
            with _device_ctx(self.stream.device_index):
                self.dst_prev_stream = current_stream(None)
        set_stream(self.stream)

    def __exit__(self, *args: object) -> None:
        if self.stream is None:
            return
        if self.dst_prev_stream is not None:
            set_stream(self.dst_prev_stream)
        set_stream(self.src_prev_stream)


def stream(stream: torch.Stream | None) -> StreamContext:
    r"""Return a :class:`StreamContext` that selects ``stream`` (nothing if ``None``)."""
    return StreamContext(stream)


_SYNC_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_sync_debug_mode(debug_mode: int | str) -> None:
    r"""Set the debug mode for operations that make the host wait for the NPU.

    Args:
        debug_mode (str or int): ``"default"`` or 0 to do nothing, ``"warn"`` or 1 to
            warn, ``"error"`` or 2 to raise on synchronizing operations (``item()``,
            blocking copies to the CPU).
    """
    if isinstance(debug_mode, str):
        if debug_mode not in _SYNC_DEBUG_MODES:
            raise RuntimeError(
                f"invalid sync debug mode {debug_mode!r}: use 'default', 'warn' or 'error'\n" + pta_error(ErrCode.VALUE)
            )
        debug_mode = _SYNC_DEBUG_MODES[debug_mode]
    _C._npu_set_sync_debug_mode(debug_mode)


def get_sync_debug_mode() -> int:
    r"""Return the current debug mode for synchronizing operations (0, 1 or 2)."""
    return _C._npu_get_sync_debug_mode()
