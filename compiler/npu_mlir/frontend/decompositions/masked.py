"""Scans, scatters and selections retraced as comparisons and masked reductions.

torch-mlir lowers cumsum to `tm_tensor.scan`, scatter/scatter_add to `tm_tensor.scatter` and
topk/sort to `tm_tensor.sort` (or crashes on them), none of which the Ascend pipeline can lower.
Each rewrite here states the op over one extra axis and reduces it away:
- cumsum / cumprod / logcumsumexp: out[j] = sum_k (k <= j) * x[k] (or a product, a log-sum-exp);
- scatter_add / scatter / scatter_reduce / max_unpool: out[c] = self[c] + sum_j (index[j] == c)
  * src[j] (scatter keeps the last j that hits c, as the CPU's serial loop does);
- mode: each element's frequency is its count of equal elements;
- topk / sort / kthvalue / nanmedian: each element's rank is the count of elements ordered before
  it (NaN largest, ties by position, so the order is stable); the k-th output is the element of rank k;
- index_select / index_add: out[c] = sum_j (index[j] == c) * x[j] along the dim;
- cummax / cummin: the running extreme over k <= j, its index the last k <= j holding it;
- bucketize / searchsorted count the boundaries below each value; isin compares with every test element;
- nonzero_static: the k-th row is the flat position of the k-th nonzero element (the count of
  elements whose running count of nonzeros is <= k), unravelled over the shape.
Every index passes through bounds.in_range first: one that matches no position fails the kernel at
the next synchronization, where the CPU raises. The comparison fuses into the reduction as its
producer, so the extra axis is never stored; the
work is quadratic in the scanned/sorted length, linear in everything else. Half-precision sums
accumulate in float32, as torch's CPU kernels do. Imported by retrace.py.
"""

from __future__ import annotations

from typing import Callable

import torch

from npu_mlir.frontend.decompositions.bounds import in_range
from npu_mlir.frontend.decompositions.precision import HALF

aten = torch.ops.aten


def _accumulated(x: torch.Tensor) -> torch.Tensor:
    return x.float() if x.dtype in HALF else x


def _positions(n: int, device: torch.device, axis: int) -> torch.Tensor:
    """0..n-1 along `axis` (-1 or -2) of a 2-d tensor."""
    shape = (n, 1) if axis == -2 else (1, n)
    return torch.arange(n, device=device).view(shape)


def cumsum(self: torch.Tensor, dim: int, dtype: torch.dtype | None = None) -> torch.Tensor:
    if dtype is None:
        dtype = self.dtype if self.is_floating_point() else torch.int64
    x = self.to(dtype)
    if x.dim() == 0:
        return x.clone()
    acc = _accumulated(x).movedim(dim, -1)
    n = acc.shape[-1]
    upto = _positions(n, x.device, -2) <= _positions(n, x.device, -1)  # [k, j]: k contributes to j
    out = torch.where(upto, acc.unsqueeze(-1), 0).sum(-2)
    return out.to(dtype).movedim(-1, dim)


def _hits(index: torch.Tensor, dim: int, size: int) -> torch.Tensor:
    """hit[..., j, c] = index[..., j] == c, with `dim` moved last (j) and the classes c after it; an
    index out of range fails the kernel."""
    return in_range(index, size).movedim(dim, -1).unsqueeze(-1) == torch.arange(size, device=index.device)


def _covering(t: torch.Tensor, dim: int, shape: torch.Size, value: float | bool) -> torch.Tensor:
    """t (laid out like index, with `dim` moved last) back in self's layout, padded to self's shape."""
    t = t.movedim(-1, dim)
    pad = []
    for d in reversed(range(len(shape))):
        pad += [0, shape[d] - t.shape[d]]
    if not any(pad):
        return t
    if t.dtype == torch.bool:
        return torch.nn.functional.pad(t.to(torch.uint8), pad, value=int(value)).to(torch.bool)
    return torch.nn.functional.pad(t, pad, value=value)


def _scatter_layout(self: torch.Tensor, dim: int, index: torch.Tensor) -> int:
    if self.dim() == 0 or index.dim() != self.dim():
        raise NotImplementedError("scatters of 0-d tensors run on the CPU fallback")
    return dim % self.dim()


def scatter_add(self: torch.Tensor, dim: int, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    if self.dim() == 0 and index.dim() == 0:  # one element, index 0 (cummax's gradient of a 0-d input)
        return scatter_add(self.reshape(1), 0, index.reshape(1), src.reshape(1)).reshape(())
    dim = _scatter_layout(self, dim, index)
    src = src[tuple(slice(0, s) for s in index.shape)]
    hit = _hits(index, dim, self.shape[dim])
    added = torch.where(hit, _accumulated(src).movedim(dim, -1).unsqueeze(-1), 0).sum(-2)
    return (_accumulated(self) + _covering(added, dim, self.shape, 0)).to(self.dtype)


def _last_hits(self: torch.Tensor, dim: int, index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(which hit is the last write of each target, whether a target is written), index layout."""
    hit = _hits(index, dim, self.shape[dim])
    order = _positions(hit.shape[-2], index.device, -2)
    last = torch.where(hit, order, -1).amax(-2, keepdim=True)
    return hit & (order == last), last.squeeze(-2) >= 0


def scatter_src(self: torch.Tensor, dim: int, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    if self.dim() == 0 and index.dim() == 0:  # one element, index 0 (max.dim's gradient of a 0-d input)
        return scatter_src(self.reshape(1), 0, index.reshape(1), src.reshape(1)).reshape(())
    dim = _scatter_layout(self, dim, index)
    src = src[tuple(slice(0, s) for s in index.shape)]
    final, written = _last_hits(self, dim, index)
    picked = torch.where(final, src.movedim(dim, -1).unsqueeze(-1), 0).sum(-2).to(self.dtype)
    return torch.where(_covering(written, dim, self.shape, False), _covering(picked, dim, self.shape, 0), self)


def scatter_value(self: torch.Tensor, dim: int, index: torch.Tensor, value: float) -> torch.Tensor:
    if self.dim() == 0 and index.dim() == 0:
        return scatter_value(self.reshape(1), 0, index.reshape(1), value).reshape(())
    dim = _scatter_layout(self, dim, index)
    _, written = _last_hits(self, dim, index)
    return self.masked_fill(_covering(written, dim, self.shape, False), value)


def _ranks(x: torch.Tensor, largest: bool) -> torch.Tensor:
    """Per element of the last dim, how many elements come before it in the order (stable; NaN largest)."""
    n = x.shape[-1]
    mine, other = x.unsqueeze(-1), x.unsqueeze(-2)  # [..., i, j]: is element j before element i?
    mine_nan, other_nan = torch.isnan(mine), torch.isnan(other)
    if largest:
        strictly = (other > mine) | (other_nan & ~mine_nan)
    else:
        strictly = (other < mine) | (mine_nan & ~other_nan)
    tied = (other == mine) | (other_nan & mine_nan)
    earlier = _positions(n, x.device, -1) < _positions(n, x.device, -2)
    return (strictly | (tied & earlier)).sum(-1)


def _select_ranks(x: torch.Tensor, ranks: torch.Tensor, wanted: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The values and positions of the elements whose rank is each of `wanted` (a [k, 1] column)."""
    chosen = ranks.unsqueeze(-2) == wanted  # [..., k, i]
    values = torch.where(chosen, x.unsqueeze(-2), 0).sum(-1).to(x.dtype)
    indices = torch.where(chosen, _positions(x.shape[-1], x.device, -1), 0).sum(-1)
    return values, indices


def _ordered(self: torch.Tensor, count: int, dim: int, largest: bool, first: int = 0,
             keepdim: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    if self.dim() == 0:
        return self.clone(), torch.zeros((), dtype=torch.int64, device=self.device)
    x = self.movedim(dim, -1)
    wanted = torch.arange(first, first + count, device=self.device).view(count, 1)
    values, indices = _select_ranks(x, _ranks(x, largest), wanted)
    if not keepdim:
        return values.squeeze(-1), indices.squeeze(-1)
    return values.movedim(-1, dim), indices.movedim(-1, dim)


def topk(self: torch.Tensor, k: int, dim: int = -1, largest: bool = True,
         sorted: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    # Unsorted results may come in any order: the sorted order is one of them.
    return _ordered(self, k, dim, largest)


def sort(self: torch.Tensor, dim: int = -1, descending: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    return _ordered(self, self.shape[dim] if self.dim() else 1, dim, descending)


def sort_stable(self: torch.Tensor, *, stable: bool | None = None, dim: int = -1,
                descending: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    return sort(self, dim, descending)


def kthvalue(self: torch.Tensor, k: int, dim: int = -1, keepdim: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    if self.dim() == 0:
        return self.clone(), torch.zeros((), dtype=torch.int64, device=self.device)
    return _ordered(self, 1, dim, False, first=k - 1, keepdim=keepdim)


def cumprod(self: torch.Tensor, dim: int, dtype: torch.dtype | None = None) -> torch.Tensor:
    if dtype is None:
        dtype = self.dtype if self.is_floating_point() else torch.int64
    x = self.to(dtype)
    if x.dim() == 0:
        return x.clone()
    acc = _accumulated(x).movedim(dim, -1)
    n = acc.shape[-1]
    upto = _positions(n, x.device, -2) <= _positions(n, x.device, -1)
    return torch.where(upto, acc.unsqueeze(-1), 1).prod(-2).to(dtype).movedim(-1, dim)


def logcumsumexp(self: torch.Tensor, dim: int) -> torch.Tensor:
    if self.dim() == 0:
        return self.clone()
    x = _accumulated(self).movedim(dim, -1)
    n = x.shape[-1]
    upto = _positions(n, x.device, -2) <= _positions(n, x.device, -1)
    terms = x.unsqueeze(-1)  # [..., k, j]
    peak = torch.where(upto, terms, float("-inf")).amax(-2, keepdim=True)
    peak = torch.where(torch.isinf(peak), 0.0, peak)  # all -inf (or an inf) must not give inf - inf
    total = torch.where(upto, torch.exp(terms - peak), 0.0).sum(-2, keepdim=True)
    return (torch.log(total) + peak).squeeze(-2).to(self.dtype).movedim(-1, dim)


def _median(self: torch.Tensor, dim: int, keepdim: bool, ignore_nan: bool) -> tuple[torch.Tensor, torch.Tensor]:
    if self.dim() == 0:
        return self.clone(), torch.zeros((), dtype=torch.int64, device=self.device)
    x = self.movedim(dim, -1)
    n = x.shape[-1]
    nans = torch.isnan(x).sum(-1, keepdim=True).unsqueeze(-1)  # [..., 1, 1]
    if ignore_nan:  # the lower median of the numbers; NaN ranks last, so all-NaN rows pick a NaN
        wanted = torch.clamp((n - nans - 1) // 2, min=0)
    else:  # any NaN makes the median NaN: the first NaN
        wanted = torch.where(nans > 0, n - nans, (n - 1) // 2)
    values, indices = _select_ranks(x, _ranks(x, largest=False), wanted)
    values, indices = values.squeeze(-1), indices.squeeze(-1)
    if keepdim:
        return values.unsqueeze(dim), indices.unsqueeze(dim)
    return values, indices


def nanmedian_dim(self: torch.Tensor, dim: int, keepdim: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    return _median(self, dim, keepdim, ignore_nan=True)


def median_dim(self: torch.Tensor, dim: int, keepdim: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    return _median(self, dim, keepdim, ignore_nan=False)


def _whole_median(ignore_nan: bool) -> Callable:
    """median() / nanmedian() without a dim: the value over every element."""
    def rewrite(self: torch.Tensor) -> torch.Tensor:
        return _median(self.reshape(-1), 0, False, ignore_nan)[0]

    return rewrite


def _extreme(dtype: torch.dtype, largest: bool) -> float | int:
    info = torch.finfo(dtype) if dtype.is_floating_point else torch.iinfo(dtype)
    if dtype.is_floating_point:
        return float("inf") if largest else float("-inf")
    return info.max if largest else info.min


def scatter_reduce(self: torch.Tensor, dim: int, index: torch.Tensor, src: torch.Tensor, reduce: str,
                   include_self: bool = True) -> torch.Tensor:
    dim = _scatter_layout(self, dim, index)
    src = src[tuple(slice(0, s) for s in index.shape)]
    hit = _hits(index, dim, self.shape[dim])
    values = _accumulated(src).movedim(dim, -1).unsqueeze(-1)
    base = _accumulated(self)
    if reduce in ("sum", "mean"):
        reduced = torch.where(hit, values, 0).sum(-2)
    elif reduce == "prod":
        reduced = torch.where(hit, values, 1).prod(-2)
    elif reduce in ("amax", "amin"):
        neutral = _extreme(values.dtype, largest=reduce == "amin")
        reduced = torch.where(hit, values, neutral)
        reduced = reduced.amax(-2) if reduce == "amax" else reduced.amin(-2)
    else:
        raise NotImplementedError(f"scatter_reduce '{reduce}' runs on the CPU fallback")
    reduced = _covering(reduced, dim, self.shape, 0)
    written = _covering(hit.any(-2), dim, self.shape, False)
    if include_self:
        if reduce in ("sum", "mean"):
            combined = base + reduced
        elif reduce == "prod":
            combined = base * reduced
        else:
            combined = torch.maximum(base, reduced) if reduce == "amax" else torch.minimum(base, reduced)
    else:
        combined = reduced
    if reduce == "mean":
        count = _covering(hit.sum(-2), dim, self.shape, 0) + int(include_self)
        count = torch.clamp(count, min=1)
        combined = combined / count if combined.is_floating_point() else torch.div(combined, count,
                                                                                   rounding_mode="floor")
    return torch.where(written, combined, base).to(self.dtype)


def max_unpool(self: torch.Tensor, indices: torch.Tensor, output_size: list[int], *_: object) -> torch.Tensor:
    """max_unpool2d/3d: each pooled value written at its flat position in the output plane / volume."""
    spatial = len(output_size)
    lead = self.shape[:-spatial]
    flat = self.reshape(*lead, -1)
    plane = 1
    for size in output_size:
        plane *= size
    out = torch.zeros((*lead, plane), dtype=self.dtype, device=self.device)
    return scatter_src(out, -1, indices.reshape(*lead, -1), flat).reshape(*lead, *output_size)


def _count_before(sequence: torch.Tensor, values: torch.Tensor, right: bool) -> torch.Tensor:
    """How many entries of each (sorted) row of `sequence` are < (<= if right) each value."""
    if sequence.dim() == 1:
        rows, wanted = sequence, values.unsqueeze(-1)
    else:
        rows, wanted = sequence.unsqueeze(-2), values.unsqueeze(-1)
    return ((rows <= wanted) if right else (rows < wanted)).sum(-1)


def bucketize(self: torch.Tensor, boundaries: torch.Tensor, *, out_int32: bool = False,
              right: bool = False) -> torch.Tensor:
    return _count_before(boundaries, self, right).to(torch.int32 if out_int32 else torch.int64)


def searchsorted(sorted_sequence: torch.Tensor, self: torch.Tensor, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None, sorter: torch.Tensor | None = None) -> torch.Tensor:
    if sorter is not None:
        # The rows in sorter's order by comparisons (the sim cannot schedule this gather); a sorter
        # index out of range fails the kernel.
        n = sorted_sequence.shape[-1]
        hits = in_range(sorter, n).unsqueeze(-1) == torch.arange(n, device=sorter.device)  # [..., i, j]
        sorted_sequence = torch.where(hits, sorted_sequence.unsqueeze(-2), 0).sum(-1).to(sorted_sequence.dtype)
    counts = _count_before(sorted_sequence, self, right or side == "right")
    return counts.to(torch.int32 if out_int32 else torch.int64)


def _cumulative_extreme(largest: bool) -> Callable:
    """cummax / cummin as the CPU's serial loop: `x >= best` (<= for cummin) takes x, so ties keep
    the last index; a NaN takes over and stays (a later NaN takes its index)."""
    def rewrite(self: torch.Tensor, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
        if self.dim() == 0:
            return self.clone(), torch.zeros((), dtype=torch.int64, device=self.device)
        x = self.movedim(dim, -1)
        n = x.shape[-1]
        upto = _positions(n, x.device, -2) <= _positions(n, x.device, -1)  # [k, j]: k is seen by j
        terms = x.unsqueeze(-1)
        neutral = _extreme(x.dtype, largest=not largest)
        seen = torch.where(upto, terms, neutral)
        best = seen.amax(-2) if largest else seen.amin(-2)
        if x.is_floating_point():
            nan_seen = (upto & torch.isnan(terms)).any(-2)
            best = torch.where(nan_seen, float("nan"), best)
            same = (terms == best.unsqueeze(-2)) | (torch.isnan(terms) & torch.isnan(best.unsqueeze(-2)))
        else:
            same = terms == best.unsqueeze(-2)
        index = torch.where(upto & same, _positions(n, x.device, -2), -1).amax(-2)
        return best.to(self.dtype).movedim(-1, dim), index.movedim(-1, dim)

    return rewrite


def index_select(self: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    # A gather (torch-mlir's lowering of index.Tensor, as indexing.index): a comparison with every
    # position made embedding's 128 rows of a 512 x 128 table one 590 us kernel, the gather 8 us.
    # The clamp is a no-op on the device (in_range failed the kernel otherwise); make_fx traces on
    # example index values, which need not be in range.
    if self.dim() == 0:
        return self.clone()  # the one element; torch keeps the 0-d shape for a one-element index
    dim %= self.dim()
    size = self.shape[dim]
    rows = in_range(index.reshape(-1).to(torch.int64), size).clamp(0, size - 1)
    return aten.index.Tensor(self, [None] * dim + [rows])


def index_add(self: torch.Tensor, dim: int, index: torch.Tensor, source: torch.Tensor,
              *, alpha: float = 1) -> torch.Tensor:
    if self.dim() == 0:
        return (_accumulated(self) + alpha * _accumulated(source).reshape(())).to(self.dtype)
    dim %= self.dim()
    return add_rows(self, dim, _index_hits(self, dim, index), source, alpha)


def add_rows(self: torch.Tensor, dim: int, hit: torch.Tensor, source: torch.Tensor, alpha: float = 1) -> torch.Tensor:
    """self plus alpha * each row j of source along dim added at the positions c where hit[j, c]."""
    src = _accumulated(source.reshape(self.shape[:dim] + (hit.shape[0],) + self.shape[dim + 1:]))
    added = torch.where(hit, src.movedim(dim, -1).unsqueeze(-1), 0).sum(-2)  # [..., C]
    if alpha != 1:
        added = added * alpha
    return (_accumulated(self) + added.movedim(-1, dim)).to(self.dtype)


def _index_hits(self: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    """hit[j, c]: index row j names position c along dim (self has at least one dim); an index out
    of range fails the kernel."""
    rows = in_range(index.reshape(-1), self.shape[dim])
    return rows.unsqueeze(-1) == torch.arange(self.shape[dim], device=self.device)


def _along(t: torch.Tensor, dim: int, ndim: int) -> torch.Tensor:
    """A [C] mask over dim, shaped to broadcast against an ndim tensor."""
    shape = [1] * ndim
    shape[dim] = -1
    return t.reshape(shape)


def index_fill(self: torch.Tensor, dim: int, index: torch.Tensor, value: float | torch.Tensor) -> torch.Tensor:
    fill = value.to(self.dtype) if isinstance(value, torch.Tensor) else value
    if self.dim() == 0:  # the one element (index 0)
        return torch.where(torch.ones_like(self, dtype=torch.bool), fill, self)
    dim %= self.dim()
    index = torch.where(index < 0, index + self.shape[dim], index)  # the CPU's index_fill counts from the end
    return torch.where(_along(_index_hits(self, dim, index).any(0), dim, self.dim()), fill, self)


def index_copy(self: torch.Tensor, dim: int, index: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
    if self.dim() == 0:
        return source.reshape(()).to(self.dtype).clone()
    dim %= self.dim()
    return copy_rows(self, dim, _index_hits(self, dim, index), source)


def copy_rows(self: torch.Tensor, dim: int, hit: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
    """self with each position c along dim replaced by the last row j of source where hit[j, c]."""
    order = torch.arange(hit.shape[0], device=self.device).unsqueeze(-1)
    last = torch.where(hit, order, -1).amax(0, keepdim=True)
    final = hit & (order == last)  # the last row written to each position, as the CPU's serial loop
    src = source.reshape(self.shape[:dim] + (hit.shape[0],) + self.shape[dim + 1:]).movedim(dim, -1).unsqueeze(-1)
    picked = torch.where(final, src, 0).sum(-2).to(self.dtype).movedim(-1, dim)  # one term per position
    return torch.where(_along(last.squeeze(0) >= 0, dim, self.dim()), picked, self)


def index_reduce(self: torch.Tensor, dim: int, index: torch.Tensor, source: torch.Tensor, reduce: str, *,
                 include_self: bool = True) -> torch.Tensor:
    if self.dim() == 0:
        self, source, dim = self.reshape(1), source.reshape(1), 0
        return index_reduce(self, dim, index.reshape(1), source, reduce, include_self=include_self).reshape(())
    dim %= self.dim()
    hit = _index_hits(self, dim, index)  # [L, C]
    src = _accumulated(source.reshape(self.shape[:dim] + (hit.shape[0],) + self.shape[dim + 1:]))
    src = src.movedim(dim, -1).unsqueeze(-1)  # [..., L, 1]
    base = _accumulated(self)
    written = _along(hit.any(0), dim, self.dim())
    if reduce == "prod":
        out = torch.where(hit, src, 1).prod(-2).movedim(-1, dim)
        out = out * base if include_self else out
    elif reduce in ("amax", "amin"):
        largest = reduce == "amax"
        neutral = _extreme(src.dtype, largest=not largest)
        picked = torch.where(hit, src, neutral)
        out = (picked.amax(-2) if largest else picked.amin(-2)).movedim(-1, dim)
        if include_self:
            out = torch.maximum(out, base) if largest else torch.minimum(out, base)
    elif reduce == "mean":
        total = torch.where(hit, src, 0).sum(-2).movedim(-1, dim)
        count = _along(hit.sum(0), dim, self.dim()).to(total.dtype)
        if include_self:
            total, count = total + base, count + 1
        out = total / count if self.is_floating_point() else torch.div(total, count, rounding_mode="floor")
    else:
        raise NotImplementedError(f"index_reduce '{reduce}' runs on the CPU fallback")
    return torch.where(written, out.to(self.dtype), self)


def _flat_index(self: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """take / put index into self as if it were 1-d; a negative index counts from the end."""
    rows = index.reshape(-1)
    return torch.where(rows < 0, rows + self.numel(), rows)


def take(self: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    return index_select(self.reshape(-1), 0, _flat_index(self, index)).reshape(index.shape)


def put(self: torch.Tensor, index: torch.Tensor, source: torch.Tensor, accumulate: bool = False) -> torch.Tensor:
    # take's backward: put_(zeros, index, grad, accumulate=True). Without accumulate the last write
    # to a position wins, as the CPU's serial loop.
    flat, rows, src = self.reshape(-1), _flat_index(self, index), source.reshape(-1)
    out = index_add(flat, 0, rows, src) if accumulate else index_copy(flat, 0, rows, src)
    return out.reshape(self.shape)


def mode(self: torch.Tensor, dim: int = -1, keepdim: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """The most frequent value along dim (the smallest of equally frequent ones) and the last index
    holding it, as the CPU's sort-and-scan gives them; each element's frequency is its count of equals."""
    if self.dim() == 0:
        return self.clone(), torch.zeros((), dtype=torch.int64, device=self.device)
    x = self.movedim(dim, -1)
    n = x.shape[-1]
    counts = (x.unsqueeze(-1) == x.unsqueeze(-2)).sum(-1)
    frequent = counts == counts.amax(-1, keepdim=True)
    largest = torch.finfo(x.dtype).max if x.is_floating_point() else True if x.dtype == torch.bool else torch.iinfo(x.dtype).max
    values = torch.where(frequent, x, largest).amin(-1, keepdim=True)
    positions = torch.arange(n, device=x.device)
    indices = torch.where(x == values, positions, -1).amax(-1, keepdim=True)
    if not keepdim:
        values, indices = values.squeeze(-1), indices.squeeze(-1)
    else:
        values, indices = values.movedim(-1, dim), indices.movedim(-1, dim)
    return values, indices


def nonzero_static(self: torch.Tensor, *, size: int, fill_value: int = -1) -> torch.Tensor:
    """csrc/aten/IndexingOps.cpp's nonzero runs this with `size` the nonzero count rounded up."""
    if self.dim() == 0:
        return torch.zeros((size, 0), dtype=torch.int64, device=self.device)
    flat = (self != 0).reshape(-1)
    running = cumsum(flat.to(torch.int64), 0)  # nonzeros up to and including each element
    rows = torch.arange(size, device=self.device).unsqueeze(-1)
    position = (running.unsqueeze(0) <= rows).sum(-1)  # [size]: the k-th nonzero's flat position
    found = rows.squeeze(-1) < running[-1:]
    coordinates, stride = [], 1
    for extent in reversed(self.shape):
        coordinates.append(torch.remainder(torch.div(position, stride, rounding_mode="floor"), extent))
        stride *= extent
    coordinates.reverse()
    return torch.where(found.unsqueeze(-1), torch.stack(coordinates, -1), fill_value)


def isin(elements: torch.Tensor, test_elements: torch.Tensor, *, assume_unique: bool = False,
         invert: bool = False) -> torch.Tensor:
    found = (elements.unsqueeze(-1) == test_elements.reshape(-1)).any(-1)
    return ~found if invert else found


MASKED: dict[torch._ops.OpOverload, Callable] = {
    aten.cumsum.default: cumsum,
    aten.scatter_add.default: scatter_add,
    aten.scatter.src: scatter_src,
    aten.scatter.value: scatter_value,
    aten.topk.default: topk,
    aten.sort.default: sort,
    aten.sort.stable: sort_stable,
    aten.kthvalue.default: kthvalue,
    aten.cumprod.default: cumprod,
    aten._logcumsumexp.default: logcumsumexp,
    aten.nanmedian.dim: nanmedian_dim,
    aten.median.dim: median_dim,
    aten.median.default: _whole_median(ignore_nan=False),
    aten.nanmedian.default: _whole_median(ignore_nan=True),
    aten.scatter_reduce.two: scatter_reduce,
    aten.max_unpool2d.default: max_unpool,
    aten.max_unpool3d.default: max_unpool,
    aten.bucketize.Tensor: bucketize,
    aten.searchsorted.Tensor: searchsorted,
    aten.index_select.default: index_select,
    aten.index_add.default: index_add,
    aten.cummax.default: _cumulative_extreme(largest=True),
    aten.cummin.default: _cumulative_extreme(largest=False),
    aten.isin.Tensor_Tensor: isin,
    aten.mode.default: mode,
    aten.index_fill.int_Scalar: index_fill,
    aten.index_fill.int_Tensor: index_fill,
    aten.index_copy.default: index_copy,
    aten.index_reduce.default: index_reduce,
    aten.take.default: take,
    aten.put.default: put,
    aten.nonzero_static.default: nonzero_static,
}
