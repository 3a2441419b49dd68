"""Internal NPU formats in torch ops, for kernels that take or make a tensor's physical storage.

A compiled kernel receives an internal-format input (FRACTAL_NZ, NC1HWC0, FRACTAL_Z) as its
physical storage, a contiguous tensor of `storage_shape(...)`; `to_logical` is the prologue the
traced function runs on it (view, permute, reshape, slice: all lowered by the compiler).
`to_physical` is the other direction (pad, reshape, permute). Both conversions are also the
references of two custom ops (REFERENCES, see references/__init__.py) that csrc/core/NpuFormat.cpp runs as
compiled kernels: npu::_npu_format_to_base (its input's prologue does the work) and
npu::_npu_format_to_physical. The layouts are DESIGN.md section 4; NpuFormat.cpp's host-side
conversion (its fallback) must match them. Imported by compile workers too: it
imports nothing from torch_npu.
"""

from __future__ import annotations

import math

import torch

NC1HWC0 = 3
FRACTAL_Z = 4
FRACTAL_NZ = 29
INTERNAL_FORMATS = frozenset({NC1HWC0, FRACTAL_Z, FRACTAL_NZ})


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _blocking(shape: tuple, fmt: int, dtype: torch.dtype) -> tuple[list, list, list]:
    """(padded logical shape, physical shape viewed with split dims, permutation to blocked logical)."""
    if fmt == FRACTAL_NZ:
        *batch, m, n = shape
        c0 = 32 if dtype.itemsize == 1 else 16
        m1, n1 = _ceil(m, 16), _ceil(n, c0)
        k = len(batch)
        return [*batch, m1 * 16, n1 * c0], [*batch, n1, m1, 16, c0], [*range(k), k + 1, k + 2, k, k + 3]
    if fmt == NC1HWC0:
        n, c, h, w = shape
        c1 = _ceil(c, 16)
        return [n, c1 * 16, h, w], [n, c1, h, w, 16], [0, 1, 4, 2, 3]
    if fmt == FRACTAL_Z:
        co, ci, kh, kw = shape
        co1, ci1 = _ceil(co, 16), _ceil(ci, 16)
        return [co1 * 16, ci1 * 16, kh, kw], [ci1, kh, kw, co1, 16, 16], [3, 4, 0, 5, 1, 2]
    raise ValueError(f"acl_format {fmt} is not an internal format")


def storage_shape(shape: tuple, fmt: int, dtype: torch.dtype) -> tuple:
    """The physical (storage) shape of a tensor of logical `shape` stored in `fmt`."""
    if fmt == FRACTAL_Z:
        co, ci, kh, kw = shape
        return (_ceil(ci, 16) * kh * kw, _ceil(co, 16), 16, 16)
    return tuple(_blocking(tuple(shape), fmt, dtype)[1])


def to_logical(physical: torch.Tensor, fmt: int, shape: tuple) -> torch.Tensor:
    """The logical tensor of `shape` whose `fmt` storage is `physical` (contiguous)."""
    padded, phys_view, perm = _blocking(tuple(shape), fmt, physical.dtype)
    blocked = physical.reshape(phys_view).permute(perm).reshape(padded)
    for dim, size in enumerate(shape):
        if blocked.shape[dim] != size:
            blocked = blocked.narrow(dim, 0, size)
    return blocked


def to_physical(logical: torch.Tensor, fmt: int) -> torch.Tensor:
    """The contiguous physical storage (zero padded) of `logical` stored in `fmt`."""
    shape = tuple(logical.shape)
    padded, phys_view, perm = _blocking(shape, fmt, logical.dtype)
    pad = []
    for size, target in zip(reversed(shape), reversed(padded)):
        pad += [0, target - size]
    x = torch.ops.aten.constant_pad_nd(logical, pad, 0) if any(pad) else logical
    inverse = sorted(range(len(perm)), key=perm.__getitem__)
    blocked = x.reshape([phys_view[p] for p in perm])
    return blocked.permute(inverse).contiguous().reshape(storage_shape(shape, fmt, logical.dtype))


def _format_to_base(self: torch.Tensor) -> torch.Tensor:
    # On the compile path the input's prologue has already rebuilt the logical tensor.
    return self.clone()


def _format_to_physical(self: torch.Tensor, acl_format: int) -> torch.Tensor:
    return to_physical(self, acl_format)


REFERENCES = {"_npu_format_to_base": _format_to_base, "_npu_format_to_physical": _format_to_physical}


def contiguous_strides(shape: tuple) -> tuple:
    return tuple(math.prod(shape[i + 1:]) for i in range(len(shape)))
