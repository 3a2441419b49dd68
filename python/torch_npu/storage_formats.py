"""NPU storage formats, as in torch_npu: npu_format_cast, npu_format_cast_, get_npu_format,
empty_with_format and the Format numbers (aclFormat).

A tensor stored in an internal format (NC1HWC0, FRACTAL_Z, FRACTAL_NZ) keeps its bytes in the
device's physical order; every consumer (copies to the host, printing, torch.save, deepcopy,
compiled kernels, the CPU fallback) reads it through its logical values. Internal formats are
created only while ``torch.npu.config.allow_internal_format`` is True (default False, as
torch_npu on Atlas A2); otherwise a cast to one keeps the base format, with a warning.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

import torch

__all__ = ["Format", "empty_with_format", "get_npu_format", "npu_format_cast", "npu_format_cast_"]


class Format(enum.IntEnum):
    """aclFormat numbers accepted wherever an ``acl_format`` int is."""

    NCHW = 0
    NHWC = 1
    ND = 2
    NC1HWC0 = 3
    FRACTAL_Z = 4
    FRACTAL_NZ = 29
    NCDHW = 30
    NDC1HWC0 = 32
    FRACTAL_Z_3D = 33


_INTERNAL = frozenset({Format.NC1HWC0, Format.FRACTAL_Z, Format.FRACTAL_NZ})


def npu_format_cast(input: torch.Tensor, acl_format: int) -> torch.Tensor:
    """Return ``input`` stored in ``acl_format``: ``input`` itself if it already is, else a new tensor.

    The conversion is queued on the current stream and returns at once. Differentiable: the gradient
    passes through unchanged.
    """
    return torch.ops.npu.npu_format_cast(input, int(acl_format))


def npu_format_cast_(self: torch.Tensor, src: torch.Tensor | int) -> torch.Tensor:
    """Store ``self`` in ``src``'s format (a tensor) or in format ``src`` (an int), in place."""
    if isinstance(src, torch.Tensor):
        return torch.ops.npu.npu_format_cast_(self, src)
    return torch.ops.npu.npu_format_cast_.acl_format(self, int(src))


def get_npu_format(input: torch.Tensor) -> int:
    """Return the aclFormat number ``input``'s storage is kept in (its base format unless cast)."""
    return torch.ops.npu.get_npu_format(input)


def empty_with_format(size: Sequence[int], dtype: torch.dtype | None = None, layout: torch.layout | None = None,
                      device: torch.device | str | int | None = None, pin_memory: bool | None = None,
                      acl_format: int = Format.ND) -> torch.Tensor:
    """Return an uninitialised npu tensor of ``size`` stored in ``acl_format`` (default ND).

    ``device`` defaults to the current npu device; internal-format padding is zero.
    """
    if isinstance(device, (str, int)):
        device = torch.device("npu", device) if isinstance(device, int) else torch.device(device)
    return torch.ops.npu.empty_with_format(list(size), dtype=dtype, layout=layout, device=device,
                                           pin_memory=pin_memory, acl_format=int(acl_format))


def _is_internal(t: torch.Tensor) -> bool:
    return t.device.type == "npu" and get_npu_format(t) in _INTERNAL


def _base_format(t: torch.Tensor) -> int:
    return {4: Format.NCHW, 5: Format.NCDHW}.get(t.dim(), Format.ND)


def _format_cast_backward(ctx, grad: torch.Tensor):
    # A format cast keeps every logical value: the gradient passes through (in its base format).
    return grad, None


torch.library.register_autograd("npu::npu_format_cast", _format_cast_backward)

_reduce_ex_internal = torch.Tensor._reduce_ex_internal
_deepcopy = torch.Tensor.__deepcopy__


def _reduce_in_base_format(self: torch.Tensor, proto: int):
    # torch.save writes the storage's bytes: an internal-format one is saved through its base format.
    if _is_internal(self):
        with torch.no_grad():
            base = npu_format_cast(self, _base_format(self))
        base.requires_grad_(self.requires_grad)
        return _reduce_ex_internal(base, proto)
    return _reduce_ex_internal(self, proto)


def _deepcopy_keeping_format(self: torch.Tensor, memo: dict) -> torch.Tensor:
    # The default deep copy copies storage bytes into a storage without the format.
    if not _is_internal(self) or id(self) in memo:
        return _deepcopy(self, memo)
    with torch.no_grad():
        copy = npu_format_cast(npu_format_cast(self, _base_format(self)), get_npu_format(self))
    copy.requires_grad_(self.requires_grad)
    memo[id(self)] = copy
    return copy


torch.Tensor._reduce_ex_internal = _reduce_in_base_format
torch.Tensor.__deepcopy__ = _deepcopy_keeping_format
# As torch_npu: t.npu_format_cast(29), t.npu_format_cast_(29).
torch.Tensor.npu_format_cast = npu_format_cast
torch.Tensor.npu_format_cast_ = npu_format_cast_
