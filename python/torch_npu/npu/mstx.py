"""``torch.npu.mstx``: MindStudio Tools Extension markers and ranges, as torch_npu's.

Markers and ranges are recorded in this process (``mstx.records()``), with host
timestamps and the stream they were tied to. While a ``torch_npu.profiler.profile`` with
``_ExperimentalConfig(msprof_tx=True)`` (or ``mstx=True``) records, as torch_npu collects them
then, each range is also a range of the trace (a user annotation: ``prof.events()``,
``trace_view.json``) and each marker a zero-length one.
"""

import itertools
import threading
import time
from typing import Any

import torch

from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["mstx"]


def _checked_message(message: Any) -> str:
    if not isinstance(message, str):
        raise TypeError(f"mstx message must be a str, got {type(message).__name__}\n" + pta_error(ErrCode.TYPE))
    return message


def _stream_index(stream: Any) -> int | None:
    if stream is None:
        return None
    if not isinstance(stream, torch.Stream):
        raise TypeError("stream must be a torch.npu.Stream or None\n" + pta_error(ErrCode.TYPE))
    return stream.stream_id


class mstx:
    """Static API: ``mstx.mark(msg)``, ``rid = mstx.range_start(msg, stream)``, ``mstx.range_end(rid)``."""

    _lock = threading.Lock()
    _ids = itertools.count(1)
    _records: list[dict[str, Any]] = []
    _open: dict[int, dict[str, Any]] = {}
    _in_profile = False  # set by torch_npu.profiler.profile while it collects mstx data
    _trace_handles: dict[int, Any] = {}

    @staticmethod
    def mark(message: str = "", stream: Any = None) -> None:
        """Record an instant marker."""
        record = {"kind": "mark", "message": _checked_message(message), "stream": _stream_index(stream),
                  "start_ns": time.perf_counter_ns()}
        with mstx._lock:
            mstx._records.append(record)
        if mstx._in_profile:
            torch.ops.profiler._record_function_exit(torch.ops.profiler._record_function_enter_new(record["message"]))

    @staticmethod
    def range_start(message: str = "", stream: Any = None) -> int:
        """Open a range; returns its id for :meth:`range_end`."""
        record = {"kind": "range", "message": _checked_message(message), "stream": _stream_index(stream),
                  "start_ns": time.perf_counter_ns(), "end_ns": None}
        with mstx._lock:
            range_id = next(mstx._ids)
            record["id"] = range_id
            mstx._open[range_id] = record
            mstx._records.append(record)
            if mstx._in_profile:
                mstx._trace_handles[range_id] = torch.ops.profiler._record_function_enter_new(record["message"])
        return range_id

    @staticmethod
    def range_end(range_id: int) -> None:
        """Close the range :meth:`range_start` returned."""
        with mstx._lock:
            record = mstx._open.pop(range_id, None)
            trace_handle = mstx._trace_handles.pop(range_id, None)
        if trace_handle is not None:
            torch.ops.profiler._record_function_exit(trace_handle)
        if record is None:
            raise ValueError(f"mstx range {range_id!r} is not open\n" + pta_error(ErrCode.VALUE))
        record["end_ns"] = time.perf_counter_ns()

    @staticmethod
    def records() -> list[dict[str, Any]]:
        """Every marker and range recorded so far (copies), oldest first."""
        with mstx._lock:
            return [dict(r) for r in mstx._records]
