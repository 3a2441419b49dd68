"""torch.cuda's deprecated "cached" names of the reserved-memory queries, and cache releases
torch_npu names separately."""

import warnings

from torch_npu.npu import memory

__all__ = ["empty_virt_addr_cache", "ipc_collect", "max_memory_cached", "memory_cached", "reset_max_memory_cached"]


def memory_cached(device: memory.Device = None) -> int:
    """Deprecated: :func:`torch.npu.memory_reserved`."""
    warnings.warn("torch.npu.memory_cached has been renamed to torch.npu.memory_reserved", FutureWarning)
    return memory.memory_reserved(device)


def max_memory_cached(device: memory.Device = None) -> int:
    """Deprecated: :func:`torch.npu.max_memory_reserved`."""
    warnings.warn("torch.npu.max_memory_cached has been renamed to torch.npu.max_memory_reserved", FutureWarning)
    return memory.max_memory_reserved(device)


def reset_max_memory_cached(device: memory.Device = None) -> None:
    """Deprecated: resets every peak statistic (:func:`torch.npu.reset_peak_memory_stats`)."""
    warnings.warn(
        "torch.npu.reset_max_memory_cached now calls torch.npu.reset_peak_memory_stats, "
        "which resets /all/ peak memory stats.",
        FutureWarning,
    )
    memory.reset_peak_memory_stats(device)


def empty_virt_addr_cache() -> None:
    """Release cached memory whose virtual address ranges torch_npu keeps for expandable segments.

    The simulator maps no virtual address ranges (segments are plain host allocations),
    so this releases the unused cached segments, as :func:`torch.npu.empty_cache`.
    """
    memory.empty_cache()


def ipc_collect() -> None:
    """Free npu memory shared with other processes that they no longer use (torch.cuda.ipc_collect).

    A tensor sent to other processes keeps its block after it dies here until every
    receiver has released it; this returns such blocks to the caching allocator. Returns at once.
    """
    from torch_npu import _C

    _C._npu_ipc_collect()
