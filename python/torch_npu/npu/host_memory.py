"""The pinned (page-locked) host memory cache behind ``tensor.pin_memory()``, as torch.cuda's.

Pinned blocks are rounded up to a power of two and cached when freed: the next
request of that size gets the same block back once the streams that used it have
finished with it. The cache is released by :func:`host_empty_cache`, and
automatically when the host runs short (before an allocation fails).

Pinned and device memory are both host memory on the simulator and share one
bound (``NPU_SIM_HOST_MEMORY``, see the README): :func:`host_mem_info` reports it.
"""

import collections
from typing import Any

from torch_npu import _C

__all__ = [
    "host_empty_cache",
    "host_mem_info",
    "host_memory_stats",
    "host_memory_stats_as_nested_dict",
    "reset_accumulated_host_memory_stats",
    "reset_peak_host_memory_stats",
]


def host_empty_cache() -> None:
    """Release every cached pinned block that no stream still uses back to the host."""
    _C._npu_host_empty_cache()


def host_memory_stats_as_nested_dict() -> dict[str, Any]:
    """Return :func:`host_memory_stats` as a nested dictionary."""
    return _C._npu_host_memory_stats()


def host_memory_stats() -> dict[str, Any]:
    """Return the pinned host allocator's statistics, keyed as ``torch.cuda.host_memory_stats``.

    ``"{allocations,allocated_bytes,active_requests,active_bytes}.{current,peak,allocated,freed}"``
    (allocations / allocated_bytes count cached and active blocks, active_* the blocks
    handed out), ``"num_host_alloc"``, ``"num_host_free"`` (aclrtMallocHost / aclrtFreeHost
    calls) and ``"host_{alloc,free}_time.{total,max,min,count,avg}"`` in microseconds.
    """
    result = []

    def add(prefix: str, obj: Any) -> None:
        if isinstance(obj, dict):
            for key, value in obj.items():
                add(f"{prefix}.{key}" if prefix else key, value)
        else:
            result.append((prefix, obj))

    add("", host_memory_stats_as_nested_dict())
    result.sort()
    return collections.OrderedDict(result)


def reset_accumulated_host_memory_stats() -> None:
    """Zero the ``allocated`` / ``freed`` counters and the timing totals of the host statistics."""
    _C._npu_reset_accumulated_host_memory_stats()


def reset_peak_host_memory_stats() -> None:
    """Set every ``peak`` host statistic to its current value."""
    _C._npu_reset_peak_host_memory_stats()


def host_mem_info() -> tuple[int, int]:
    """Return ``(used, limit)``: host bytes the simulator's device and pinned memory take, and its bound."""
    return _C._npu_host_mem_info()
