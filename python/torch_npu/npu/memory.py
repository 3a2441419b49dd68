"""Memory management for NPU devices, with the names and semantics of torch.cuda.memory.

Every NPU allocation goes through one caching allocator per device (the runtime's
``npurt/caching_allocator.h``): freed blocks stay cached for reuse until
:func:`empty_cache`. The queries here (stats, summaries, snapshots) read the
allocator's counters directly and never initialise a device.

Configure the allocator with ``PYTORCH_NPU_ALLOC_CONF`` (read once, at the first
allocation), e.g. ``max_split_size_mb:256,garbage_collection_threshold:0.8``; the keys
are ``max_split_size_mb``, ``garbage_collection_threshold``, ``expandable_segments`` and
``per_process_memory_fraction``. Unknown keys and bad values raise ``ValueError``.
"""

import collections
import pickle
import sys
import warnings
from typing import Any

import torch

from torch_npu import _C
from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = [
    "caching_allocator_alloc",
    "caching_allocator_delete",
    "set_per_process_memory_fraction",
    "get_per_process_memory_fraction",
    "empty_cache",
    "memory_stats",
    "memory_stats_as_nested_dict",
    "reset_accumulated_memory_stats",
    "reset_peak_memory_stats",
    "reset_max_memory_allocated",
    "memory_allocated",
    "max_memory_allocated",
    "memory_reserved",
    "max_memory_reserved",
    "memory_snapshot",
    "memory_summary",
    "mem_get_info",
    "_record_memory_history",
    "_snapshot",
    "_dump_snapshot",
]

Device = int | str | torch.device | None


def _device_index(device: Device) -> int:
    """Return the index of an ``npu`` device; -1 (the current device) for None."""
    if device is None:
        return -1
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "npu":
            raise ValueError(f"Expected a npu device, but got: {device}\n{pta_error(ErrCode.VALUE)}")
        return -1 if device.index is None else device.index
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    raise TypeError(
        f"Expected a device index, 'npu:N' or torch.device, got {type(device).__name__}.\n"
        f"{pta_error(ErrCode.TYPE)}"
    )


def caching_allocator_alloc(size: int, device: Device = None, stream: Any = None) -> int:
    """Allocate ``size`` bytes with the caching allocator and return the address.

    Args:
        size: bytes to allocate.
        device: the device (default None: the current device, or the stream's device).
        stream: a ``torch.npu.Stream``/``torch.Stream`` or a stream index the memory
            is used on (default None: the device's current stream).

    Free the memory with :func:`caching_allocator_delete`. Raises
    ``torch.OutOfMemoryError`` when the device has no room.
    """
    if stream is None:
        stream_index = -1
    elif isinstance(stream, int) and not isinstance(stream, bool):
        stream_index = stream
    elif hasattr(stream, "stream_id"):
        if device is None:
            device = stream.device_index
        stream_index = stream.stream_id
    else:
        raise TypeError(
            f"stream must be a Stream, a stream index or None, not {type(stream).__name__}.\n"
            f"{pta_error(ErrCode.TYPE)}"
        )
    return _C._npu_caching_allocator_alloc(size, _device_index(device), stream_index)


def caching_allocator_delete(mem_ptr: int) -> None:
    """Return memory from :func:`caching_allocator_alloc` to the cache (returns at once).

    Args:
        mem_ptr: the address :func:`caching_allocator_alloc` returned.
    """
    _C._npu_caching_allocator_delete(mem_ptr)


def set_per_process_memory_fraction(fraction: float, device: Device = None) -> None:
    """Cap the memory this process may reserve on a device at ``fraction`` of its capacity.

    Args:
        fraction: in [0, 1]; allocations beyond the cap raise ``torch.OutOfMemoryError``.
        device: the device (default None: the current device).
    """
    if not isinstance(fraction, float) and not isinstance(fraction, int):
        raise TypeError(f"Invalid type for fraction argument, must be `float`.\n{pta_error(ErrCode.TYPE)}")
    _C._npu_set_memory_fraction(float(fraction), _device_index(device))


def get_per_process_memory_fraction(device: Device = None) -> float:
    """Return the memory fraction in force on a device (default None: the current device)."""
    return _C._npu_get_memory_fraction(_device_index(device))


def empty_cache() -> None:
    """Release every unused cached block of every device back to the device.

    Waits for blocks whose reuse depends on other streams' pending work.
    """
    _C._npu_empty_cache()


def memory_stats_as_nested_dict(device: Device = None) -> dict[str, Any]:
    """Return :func:`memory_stats` as a nested dictionary (default device: the current one)."""
    return _C._npu_memory_stats(_device_index(device))


def memory_stats(device: Device = None) -> dict[str, Any]:
    """Return the caching allocator's statistics for a device, keyed as torch.cuda.memory_stats.

    Keys: ``"{allocation,segment,active,inactive_split,allocated_bytes,reserved_bytes,
    active_bytes,inactive_split_bytes,requested_bytes}.{all,large_pool,small_pool}.
    {current,peak,allocated,freed}"``, ``"oversize_{allocations,segments}.{...}"``,
    ``"num_alloc_retries"``, ``"num_ooms"``, ``"num_sync_all_streams"``,
    ``"num_device_alloc"``, ``"num_device_free"``, ``"max_split_size"`` (-1: unlimited).

    Args:
        device: the device (default None: the current device).
    """
    result = []

    def add(prefix: str, obj: Any) -> None:
        if isinstance(obj, dict):
            for key, value in obj.items():
                add(f"{prefix}.{key}" if prefix else key, value)
        else:
            result.append((prefix, obj))

    add("", memory_stats_as_nested_dict(device))
    result.sort()
    return collections.OrderedDict(result)


def reset_accumulated_memory_stats(device: Device = None) -> None:
    """Zero the ``allocated``/``freed`` counters and the retry/OOM counts of a device."""
    _C._npu_reset_accumulated_memory_stats(_device_index(device))


def reset_peak_memory_stats(device: Device = None) -> None:
    """Set every ``peak`` statistic of a device to its current value."""
    _C._npu_reset_peak_memory_stats(_device_index(device))


def reset_max_memory_allocated(device: Device = None) -> None:
    """Reset the peak of :func:`max_memory_allocated` (deprecated alias, as in torch.cuda)."""
    warnings.warn(
        "torch.npu.reset_max_memory_allocated now calls torch.npu.reset_peak_memory_stats, "
        "which resets /all/ peak memory stats.",
        FutureWarning,
    )
    reset_peak_memory_stats(device)


def memory_allocated(device: Device = None) -> int:
    """Return the bytes tensors occupy on a device (rounded block sizes)."""
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device: Device = None) -> int:
    """Return the peak of :func:`memory_allocated` since start or the last peak reset."""
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device: Device = None) -> int:
    """Return the bytes the caching allocator holds on a device (used and cached)."""
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device: Device = None) -> int:
    """Return the peak of :func:`memory_reserved` since start or the last peak reset."""
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def memory_snapshot(mempool_id: tuple[int, int] | None = None, include_traces: bool = True) -> list[dict[str, Any]]:
    """Return the segments of every device, each with its blocks, as torch.cuda.memory_snapshot.

    ``mempool_id`` (a ``MemPool.id`` or graph pool token) keeps only that pool's segments.
    ``include_traces`` is accepted as torch.cuda's: the segments returned carry no trace entries.
    """
    segments = _C._npu_memory_snapshot()["segments"]
    if mempool_id is None:
        return segments
    return [s for s in segments if tuple(s["segment_pool_id"]) == tuple(mempool_id)]


def _format_size(size: int, pref_size: float) -> str:
    prefixes = ["B  ", "KiB", "MiB", "GiB", "TiB", "PiB"]
    prefix = prefixes[0]
    for new_prefix in prefixes[1:]:
        if pref_size < 768 * 1024:
            break
        prefix = new_prefix
        size //= 1024
        pref_size /= 1024
    return f"{size:6d} {prefix}"


def _format_count(count: int, pref_count: float) -> str:
    prefixes = [" ", "K", "M"]
    prefix = prefixes[0]
    for new_prefix in prefixes[1:]:
        if pref_count < 750 * 1000:
            break
        prefix = new_prefix
        count //= 1000
        pref_count /= 1000
    return f"{count:7d} {prefix} "


def memory_summary(device: Device = None, abbreviated: bool = False) -> str:
    """Return a printable table of a device's allocator statistics, laid out as torch.cuda's.

    Args:
        device: the device (default None: the current device).
        abbreviated: leave out the per-pool rows (default False).
    """
    index = _device_index(device)
    stats = memory_stats(index)
    if index < 0:
        index = _C._npu_get_device()
    pool_metrics = [
        ("allocated_bytes", "Allocated memory", _format_size),
        ("active_bytes", "Active memory", _format_size),
        ("requested_bytes", "Requested memory", _format_size),
        ("reserved_bytes", "NPU reserved memory", _format_size),
        ("inactive_split_bytes", "Non-releasable memory", _format_size),
        ("allocation", "Allocations", _format_count),
        ("active", "Active allocs", _format_count),
        ("segment", "NPU reserved segments", _format_count),
        ("inactive_split", "Non-releasable allocs", _format_count),
    ]
    lines = [
        "=" * 75,
        f" {'':16} PyTorch NPU memory summary, device ID {index:<18d} ",
        "-" * 75,
        f"  {'':9} NPU OOMs: {stats['num_ooms']:<13d} | {'':6} aclrtMalloc retries: {stats['num_alloc_retries']:<7d}  ",
        "=" * 75,
        "        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ",
    ]
    for key, name, fmt in pool_metrics:
        lines.append("-" * 75)
        pools = [("all", name)]
        if not abbreviated:
            pools += [("large_pool", "      from large pool"), ("small_pool", "      from small pool")]
        reference = None
        for pool, label in pools:
            values = [stats[f"{key}.{pool}.{metric}"] for metric in ("current", "peak", "allocated", "freed")]
            reference = reference or values
            cells = " | ".join(fmt(value, ref) for value, ref in zip(values, reference))
            lines.append(f" {label:<21} | {cells} ")
    for key, name in (("oversize_allocations", "Oversize allocations"), ("oversize_segments", "Oversize NPU segments")):
        lines.append("-" * 75)
        values = [stats[f"{key}.{metric}"] for metric in ("current", "peak", "allocated", "freed")]
        cells = " | ".join(_format_count(value, value) for value in values)
        lines.append(f" {name:<21} | {cells} ")
    lines.append("=" * 75)
    return "|" + "|\n|".join(lines) + "|\n"


def mem_get_info(device: Device = None) -> tuple[int, int]:
    """Return ``(free, total)`` bytes of a device's global memory (default: the current device)."""
    return _C._npu_mem_get_info(_device_index(device))


def _record_memory_history(
    enabled: str | bool | None = "all",
    context: str | None = "all",
    stacks: str = "all",
    max_entries: int = sys.maxsize,
    device: Device = None,
) -> None:
    """Start or stop recording allocator events and the Python stacks that caused them.

    Args:
        enabled: "all" or "state" to record (both keep the event trace and each live
            block's stack here), None to stop and drop the trace (default "all").
            True/False are accepted as in torch's legacy signature.
        context: None records no stacks; "state", "alloc" or "all" record the Python
            stack of each allocation and free (default "all").
        stacks: "python" or "all"; only Python frames exist here (default "all").
        max_entries: trace entries kept per device, oldest dropped (default sys.maxsize).
        device: accepted for torch.cuda compatibility; recording covers all devices.
    """
    if isinstance(enabled, bool):
        enabled = "all" if enabled else None
    if enabled not in (None, "state", "all"):
        raise ValueError(f"enabled must be None, 'state' or 'all', got {enabled!r}.\n{pta_error(ErrCode.VALUE)}")
    if context not in (None, "state", "alloc", "all"):
        raise ValueError(
            f"context must be None, 'state', 'alloc' or 'all', got {context!r}.\n{pta_error(ErrCode.VALUE)}"
        )
    if stacks not in ("python", "all"):
        raise ValueError(f"stacks must be 'python' or 'all', got {stacks!r}.\n{pta_error(ErrCode.VALUE)}")
    if device is not None:
        _device_index(device)
    _C._npu_record_memory_history(enabled is not None, context is not None, max_entries if enabled else 0)


def _snapshot(device: Device = None) -> dict[str, Any]:
    """Return the allocator state and event trace in torch.cuda.memory._snapshot()'s format.

    ``{"segments": [...], "device_traces": [[...] per device]}``, which
    ``torch.cuda._memory_viz`` renders (segment_plot, trace_plot, segsum, ...).
    """
    return _C._npu_memory_snapshot()


def _dump_snapshot(filename: str = "dump_snapshot.pickle") -> None:
    """Write :func:`_snapshot` as a pickle, for https://pytorch.org/memory_viz.

    Args:
        filename: the output path (default "dump_snapshot.pickle").
    """
    with open(filename, "wb") as f:
        pickle.dump(_snapshot(), f)


# torch.cuda.memory's home of the pluggable allocator names (torch.npu.memory.change_current_allocator).
from torch_npu.npu.pluggable_allocator import (  # noqa: E402
    NPUPluggableAllocator,
    change_current_allocator,
    get_allocator_backend,
)
