"""Combined tensors: many tensors of one dtype living inside one contiguous NPU buffer, as in torch_npu.

The fused optimizers (torch_npu.optim) gather parameters, gradients and optimizer states this way, so
one kernel over the buffer updates every tensor in it. A tensor keeps its identity (a Parameter stays
the same object, autograd keeps writing its .grad) while it is re-seated on the buffer's storage
(torch_npu.npu_change_data_ptr), so it can never point at freed memory.
"""

from __future__ import annotations

from typing import Sequence

import torch

from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["get_part_combined_tensor", "is_combined_tensor_valid", "npu_change_data_ptr", "npu_combine_tensors"]


def npu_change_data_ptr(dst: torch.Tensor, src: torch.Tensor, index: int) -> int:
    r"""Move ``dst`` into ``src``'s memory without copying: its first element becomes ``src``'s element ``index``.

    ``dst`` keeps its sizes and strides; its previous memory is released and its values are now
    whatever ``src`` holds there. Both must be NPU tensors of one dtype, in a base format, and the
    elements ``dst`` spans must fit in ``src`` from ``index`` on. Returns 0.
    """
    return torch.ops.npu.npu_change_data_ptr(dst, src, index)


def _extent(t: torch.Tensor) -> int:
    """How many elements t spans from its first: 1 + sum((size - 1) * stride); 0 when empty."""
    return 0 if t.numel() == 0 else 1 + sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))


def npu_combine_tensors(list_of_tensor: Sequence[torch.Tensor], require_copy_value: bool = True) -> torch.Tensor | None:
    r"""Move the tensors into one new flat buffer, back to back, and return the buffer.

    Each tensor's span of memory is placed in order (so a strided view keeps its strides). Returns
    ``None`` for an empty list or one holding no elements.

    Args:
        list_of_tensor: NPU tensors of one dtype.
        require_copy_value (bool, optional): keep each tensor's values (default: ``True``); with
            ``False`` the buffer starts zeroed and the values are dropped.
    """
    if len(list_of_tensor) == 0:
        return None
    if any(t is None for t in list_of_tensor):
        raise RuntimeError("Tensors to combine must not have `None`. " + pta_error(ErrCode.PARAM))
    dtype = list_of_tensor[0].dtype
    device = list_of_tensor[0].device
    for t in list_of_tensor:
        if t.device.type != "npu":
            raise RuntimeError(f"Tensors to combine must be on NPU, got one on {t.device}. " + pta_error(ErrCode.PARAM))
        if t.dtype != dtype:
            raise RuntimeError(f"Tensors to combine must have the same dtype, got {dtype} and {t.dtype}; convert "
                               "them first or combine each dtype separately. " + pta_error(ErrCode.TYPE))
        if t.device != device:
            raise RuntimeError(f"Tensors to combine must be on one device, got {device} and {t.device}. "
                               + pta_error(ErrCode.PARAM))
    total = sum(_extent(t) for t in list_of_tensor)
    if total == 0:
        return None
    combined = torch.zeros(total, dtype=dtype, device=device)
    index = 0
    with torch.no_grad():
        for t in list_of_tensor:
            numel = _extent(t)
            if require_copy_value:
                # The span's elements as they are (gaps of a strided view too), then t is re-seated on the buffer.
                flat = torch.empty(0, dtype=dtype, device=device).set_(t.untyped_storage(), t.storage_offset(), (numel,))
                combined[index:index + numel].copy_(flat)
            npu_change_data_ptr(t, combined, index)
            index += numel
    return combined


def get_part_combined_tensor(combined_tensor: torch.Tensor | None, index: int, size: int) -> torch.Tensor | None:
    r"""A flat view of elements ``[index, index + size)`` of a combined buffer (no copy).

    Returns ``None`` when ``combined_tensor`` is ``None`` or ``size`` is 0.
    """
    if combined_tensor is None or size == 0:
        return None
    if index < 0 or index + size > combined_tensor.numel():
        raise RuntimeError(f"(index + size) ({index + size}) > combined_tensor.numel() "
                           f"({combined_tensor.numel()}); pass a part inside the buffer. "
                           + pta_error(ErrCode.VALUE))
    return combined_tensor.view(-1).narrow(0, index, size)


def is_combined_tensor_valid(combined_tensor: torch.Tensor | None, list_of_tensor: Sequence[torch.Tensor]) -> bool:
    r"""Whether every tensor of ``list_of_tensor`` still lives inside ``combined_tensor``'s memory.

    False once a tensor was given new memory (e.g. ``p.data = ...``), so its updates would no
    longer reach the buffer. An empty list is valid.
    """
    if len(list_of_tensor) == 0:
        return True
    if combined_tensor is None:
        return False
    start = combined_tensor.data_ptr()
    end = start + combined_tensor.numel() * combined_tensor.element_size()
    for t in list_of_tensor:
        if t is None or t.untyped_storage().data_ptr() != combined_tensor.untyped_storage().data_ptr():
            return False
        first = t.data_ptr()
        if first < start or first + _extent(t) * t.element_size() > end:
            return False
    return True
