"""Advanced indexing: `x[idx]` (index.Tensor) and `x[idx] = v` / `+=` (index_put, its backward).

Each integer index counts a negative value from the end of its dim, as the CPU does, and passes
through bounds.in_range: one out of range fails the kernel at the next synchronization.
- index.Tensor keeps torch-mlir's own lowering (a gather whose loads read the checked indices).
- index_put has none the pipeline can compile (tm_tensor.scatter), so it is scatter-free: the
  indexed dims are moved first and flattened into one of P positions, the broadcast indices become
  one linear position each, and each row of values is added (accumulate) or copied (the last write
  wins, as the CPU's serial loop) where its position matches: masked.add_rows / copy_rows, work
  L x P x the rest.
- A bool mask in index_put (`x[mask] = v`, the only index) needs no positions: where(mask, v, x).
  Values with one row per True element take the k-th row for the k-th True (a running count of the
  mask), and a count other than the rows' fails the kernel, where the CPU raises a shape mismatch.
  A bool mask in index.Tensor has a data-dependent shape: the meta function refuses it and the
  call runs on the CPU fallback.
Imported by retrace.py.
"""

from __future__ import annotations

from typing import Callable

import torch

from npu_mlir.frontend.decompositions.bounds import in_range
from npu_mlir.frontend.decompositions.masked import add_rows, copy_rows, cumsum

aten = torch.ops.aten
MASKS = (torch.bool, torch.uint8)


def _padded(self: torch.Tensor, indices: list) -> list:
    """One entry per dim of self (trailing dims not indexed)."""
    return list(indices) + [None] * (self.dim() - len(indices))


def _checked(index: torch.Tensor, size: int) -> torch.Tensor:
    """index counted from the end where negative, as int64; out of [-size, size) fails the kernel."""
    index = index.to(torch.int64)
    return _gathered(in_range(torch.where(index < 0, index + size, index), size), size)


def _gathered(checked: torch.Tensor, size: int) -> torch.Tensor:
    # A no-op on the device (in_range failed the kernel otherwise); make_fx traces on example
    # values (ones), which need not be in range, through torch's real indexing.
    return checked.clamp(0, size - 1)


def index(self: torch.Tensor, indices: list) -> torch.Tensor:
    if any(i is not None and i.dtype in MASKS for i in indices):
        raise NotImplementedError("a bool mask index has a data-dependent shape: the CPU fallback runs it")
    checked = [None if i is None else _checked(i, self.shape[k]) for k, i in enumerate(indices)]
    return aten.index.Tensor(self, checked)


def _linear_put(self: torch.Tensor, indices: list, values: torch.Tensor, accumulate: bool) -> torch.Tensor:
    positions = [k for k, i in enumerate(indices) if i is not None]
    others = [k for k in range(self.dim()) if k not in positions]
    broadcast = torch.broadcast_tensors(*[_checked(indices[k], self.shape[k]) for k in positions])
    block = broadcast[0].shape
    first = positions[0]
    adjacent = positions == list(range(first, first + len(positions)))
    other_sizes = [self.shape[k] for k in others]
    # The indexed result's shape (what values broadcast to): the index block replaces adjacent
    # indexed dims in place, else it comes first.
    if adjacent:
        result = list(self.shape[:first]) + list(block) + list(self.shape[positions[-1] + 1:])
        rows = values.expand(result).movedim(list(range(first, first + len(block))), list(range(len(block))))
    else:
        rows = values.expand(list(block) + other_sizes)
    linear = torch.zeros(block, dtype=torch.int64, device=self.device)
    count = 1
    for k, checked in zip(positions, broadcast):
        linear = linear * self.shape[k] + checked
        count *= self.shape[k]
    hit = linear.reshape(-1, 1) == torch.arange(count, device=self.device)  # [L, P]
    rows = rows.reshape(hit.shape[0], *other_sizes)
    order = positions + others
    flat = self.permute(order).reshape(count, *other_sizes)
    put = add_rows(flat, 0, hit, rows) if accumulate else copy_rows(flat, 0, hit, rows)
    inverse = [order.index(k) for k in range(self.dim())]
    return put.reshape([self.shape[k] for k in positions] + other_sizes).permute(inverse).contiguous()


def _masked_put(self: torch.Tensor, first: int, mask: torch.Tensor, values: torch.Tensor,
                accumulate: bool) -> torch.Tensor:
    mask = mask.to(torch.bool)
    rest = self.dim() - first - mask.dim()
    axis = values.dim() - 1 - rest  # values' dim facing the True elements
    if axis < 0 or values.shape[axis] == 1:
        picked = values.squeeze(axis) if axis >= 0 else values
        shape = list(picked.shape)
        picked = picked.reshape(shape[:len(shape) - rest] + [1] * mask.dim() + shape[len(shape) - rest:])
    else:
        flat = mask.reshape(-1)
        running = cumsum(flat.to(torch.int64), 0) - 1  # the k-th True element takes row k
        # Zero when the mask holds as many True elements as values has rows, else the kernel fails.
        agreed = in_range(flat.sum(0, keepdim=True).to(torch.int64) - values.shape[axis], 1)
        row = torch.where(flat, running, 0) + agreed
        picked = aten.index.Tensor(values, [None] * axis + [_gathered(in_range(row, values.shape[axis]), values.shape[axis]).reshape(mask.shape)])
    where = mask.reshape(list(mask.shape) + [1] * rest)
    if accumulate:
        return torch.where(where, self + picked, self).to(self.dtype)
    return torch.where(where, picked.to(self.dtype), self)


def index_put(self: torch.Tensor, indices: list, values: torch.Tensor, accumulate: bool = False,
              unsafe: bool = False) -> torch.Tensor:
    indices = _padded(self, indices)
    masks = [k for k, i in enumerate(indices) if i is not None and i.dtype in MASKS]
    if masks:
        given = [k for k, i in enumerate(indices) if i is not None]
        if given != masks[:1]:
            raise NotImplementedError("a bool mask beside other indices runs on the CPU fallback")
        return _masked_put(self, masks[0], indices[masks[0]], values, accumulate)
    if all(i is None for i in indices):
        raise NotImplementedError("index_put with no index tensor runs on the CPU fallback")
    return _linear_put(self, indices, values, accumulate)


INDEXING: dict[torch._ops.OpOverload, Callable] = {
    aten.index.Tensor: index,
    aten.index_put.default: index_put,
    aten._index_put_impl.default: index_put,
    aten._unsafe_index_put.default: index_put,
}
