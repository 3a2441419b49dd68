"""Results in the memory layout PyTorch gives them: a one-op kernel writes a dense result whose
strides are a permutation of a contiguous tensor's (what TensorIterator gives an elementwise op of
channels_last or permuted inputs) as the contiguous tensor of its dimensions in memory order.

A kernel's outputs are row-major buffers. The result `r` of logical sizes `s` and strides `t` is
stored exactly as `r.permute(order).contiguous()`, where `order` lists the dimensions from the
outermost in memory to the innermost; so the traced call returns that tensor, and the dispatcher
allocates the result with sizes `s` and strides `t` around the buffer the kernel writes.
"""

from __future__ import annotations

from typing import Any, Sequence

import torch


def memory_order(sizes: Sequence[int], strides: Sequence[int]) -> tuple[int, ...] | None:
    """The dimensions outermost-first in memory of a dense tensor (the identity for a contiguous one);
    None for a tensor with gaps or overlaps, or an empty one (such results stay row-major)."""
    if 0 in sizes:
        return None
    identity = tuple(range(len(sizes)))
    if _dense(sizes, strides, identity):
        return identity
    # Size-1 dimensions take no memory: where they go does not matter, ties keep the logical order.
    order = tuple(sorted(identity, key=lambda d: (-strides[d], d)))
    return order if _dense(sizes, strides, order) else None


def _dense(sizes: Sequence[int], strides: Sequence[int], order: Sequence[int]) -> bool:
    """Whether the tensor is the row-major tensor of its dimensions taken in `order`."""
    expected = 1
    for d in reversed(list(order)):
        if sizes[d] != 1 and strides[d] != expected:
            return False
        expected *= sizes[d]
    return True


def in_memory_order(result: Any, orders: Sequence[tuple[int, ...] | None]) -> Any:
    """The traced call's results with each one that has an order laid out in it (flat numbering over
    tensor-list returns, as the plan's targets)."""
    flat = iter(orders)

    def place(t: torch.Tensor) -> torch.Tensor:
        order = next(flat)
        return t if order is None or order == tuple(range(t.dim())) else t.permute(order).contiguous()

    if isinstance(result, torch.Tensor):
        return place(result)
    return tuple([place(t) for t in r] if isinstance(r, list) else place(r) for r in result)
