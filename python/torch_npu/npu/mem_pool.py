"""Private memory pools of the NPU caching allocator: torch.cuda.MemPool / use_mem_pool.

A pool has segments of its own: allocations routed to it come from them and return to them
when freed, and no other allocation is ever served from them. NPU graphs capture into pools
the same way (``NPUGraph.capture_begin(pool=MemPool().id)`` shares one with a graph).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from torch_npu import _C
from torch_npu.npu.devices import _DeviceLike, _get_device_index, current_device
from torch_npu.npu.initialization import _lazy_init
from torch_npu.utils.error_code import ErrCode, SubModule, npu_error

__all__ = ["MemPool", "use_mem_pool"]


class MemPool(_C._MemPool):
    r"""A pool of memory in the NPU caching allocator, on the current device.

    Args:
        allocator (optional): a pluggable allocator for the pool's segments. Only ``None``
            (default: the caching allocator's own segments) is supported on the simulator.
        use_on_oom (bool): let allocations outside the pool fall back to it when they run out of
            memory. Only ``False`` (default) is supported.
        no_split (bool): never split the pool's segments. Only ``False`` (default) is supported.

    The pool holds one use of its own (:meth:`use_count`); each :func:`use_mem_pool` or graph
    capture using it adds one while it lasts. When the object is dropped, its cached free
    segments are released; blocks still allocated in it stay valid until freed.
    """

    def __init__(self, allocator: Any = None, use_on_oom: bool = False, no_split: bool = False) -> None:
        for name, value, default in (("allocator", allocator, None), ("use_on_oom", use_on_oom, False),
                                     ("no_split", no_split, False)):
            if value != default:
                raise NotImplementedError(
                    f"torch.npu.MemPool({name}={value!r}) is not supported by the simulated device's caching "
                    f"allocator; leave {name} at {default!r}\n" + npu_error(SubModule.GRAPH, ErrCode.NOT_SUPPORT)
                )
        _lazy_init()
        super().__init__()

    @property
    def id(self) -> tuple[int, int]:
        r"""Return the ID of this pool as a tuple of two ints."""
        return super().id

    def use_count(self) -> int:
        r"""Return the reference count of this pool."""
        return super().use_count()

    def snapshot(self, include_traces: bool = True) -> list[dict[str, Any]]:
        r"""Return the segments of this pool, as :func:`torch.npu.memory_snapshot` reports segments."""
        from torch_npu.npu.memory import memory_snapshot

        return memory_snapshot(self.id, include_traces=include_traces)


@contextlib.contextmanager
def use_mem_pool(pool: MemPool, device: _DeviceLike = None) -> Iterator[None]:
    r"""Route the current thread's NPU allocations to ``pool`` inside the context.

    Args:
        pool (torch.npu.MemPool): the pool to allocate from.
        device (torch.device or int, optional): the device whose allocations are routed.
            Default ``None``: the current device.

    Only the current thread's allocations go to the pool: threads started inside the context
    (the autograd engine's, for instance) allocate as usual.
    """
    device_index = current_device() if device is None else _get_device_index(device)
    _C._npu_beginAllocateCurrentThreadToPool(device_index, pool.id)
    try:
        yield
    finally:
        _C._npu_endAllocateToPool(device_index, pool.id)
        _C._npu_releasePool(device_index, pool.id)
