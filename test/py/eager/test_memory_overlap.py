"""A pointwise op writing a tensor that shares memory with itself or, in part, with an input raises
TensorIterator's error, as on CPU: npu computed an answer that depends on the order of the writes."""

from __future__ import annotations

import pytest
import torch

import torch_npu  # noqa: F401

_CASES = {
    "partial_overlap_add_": lambda a: a[1:].add_(a[:-1]),
    "partial_overlap_out": lambda a: torch.mul(a[:-1], 2, out=a[1:]),
    "internal_overlap_expanded": lambda a: a[:1].expand(6).add_(1),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_overlapping_write_raises_as_on_cpu(name):
    with pytest.raises(RuntimeError, match="unsupported operation") as cpu:
        _CASES[name](torch.arange(6.0))
    with pytest.raises(RuntimeError, match="unsupported operation") as npu:
        _CASES[name](torch.arange(6.0).npu())
    assert str(npu.value).splitlines()[0] == str(cpu.value).splitlines()[0]


def test_exact_aliasing_is_allowed():
    a = torch.arange(6.0)
    b = a.npu()
    torch.testing.assert_close(b.add_(b).cpu(), a.add_(a))
    torch.testing.assert_close(torch.mul(b, 2, out=b).cpu(), torch.mul(a, 2, out=a))
