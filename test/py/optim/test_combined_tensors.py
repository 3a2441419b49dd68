"""torch_npu.utils' combined tensors and torch_npu.npu_change_data_ptr: values kept, storage shared, errors."""

from __future__ import annotations

import gc

import pytest
import torch

import torch_npu
from torch_npu.utils import get_part_combined_tensor, is_combined_tensor_valid, npu_combine_tensors


def test_combine_keeps_values_and_points_tensors_into_the_buffer():
    cpu = [torch.randn(3, 4), torch.randn(5), torch.randn(2, 2)]
    tensors = [t.npu() for t in cpu]
    combined = npu_combine_tensors(tensors)
    assert combined.shape == (21,) and is_combined_tensor_valid(combined, tensors)
    torch.testing.assert_close(combined.cpu(), torch.cat([t.flatten() for t in cpu]))
    combined.mul_(2)  # one kernel over the buffer updates every tensor
    for t, c in zip(tensors, cpu):
        torch.testing.assert_close(t.cpu(), 2 * c)
    part = get_part_combined_tensor(combined, 12, 5)
    torch.testing.assert_close(part.cpu(), 2 * cpu[1])
    assert get_part_combined_tensor(combined, 0, 0) is None and get_part_combined_tensor(None, 0, 3) is None
    assert not is_combined_tensor_valid(combined, [torch.ones(3, device="npu")])
    assert npu_combine_tensors([]) is None


def test_combined_memory_outlives_a_dropped_buffer():
    tensors = [torch.arange(4.0).npu(), torch.arange(3.0).npu()]
    npu_combine_tensors(tensors)  # the buffer itself is dropped at once
    gc.collect()
    torch.empty(1 << 16, device="npu").fill_(7.0)  # would reuse freed memory
    torch.testing.assert_close(tensors[0].cpu(), torch.arange(4.0))
    torch.testing.assert_close(tensors[1].cpu(), torch.arange(3.0))


def test_npu_change_data_ptr():
    src = torch.arange(10.0).npu()
    dst = torch.zeros(2, 2).npu()
    assert torch_npu.npu_change_data_ptr(dst, src, 3) == 0
    torch.testing.assert_close(dst.cpu(), torch.tensor([[3.0, 4.0], [5.0, 6.0]]))
    dst.fill_(-1.0)
    assert src.cpu()[3:7].tolist() == [-1.0] * 4
    with pytest.raises(RuntimeError, match="ERR01003"):
        torch_npu.npu_change_data_ptr(dst, src, 8)
    with pytest.raises(RuntimeError, match="ERR01002"):
        torch_npu.npu_change_data_ptr(dst.half(), src, 0)
    with pytest.raises(RuntimeError, match="ERR01001"):
        torch_npu.npu_change_data_ptr(torch.zeros(2), src, 0)


def test_combine_rejects_mixed_input():
    with pytest.raises(RuntimeError, match="same dtype(.|\n)*ERR00002"):
        npu_combine_tensors([torch.ones(2, device="npu"), torch.ones(2, device="npu", dtype=torch.float16)])
    with pytest.raises(RuntimeError, match="must be on NPU(.|\n)*ERR00001"):
        npu_combine_tensors([torch.ones(2)])
    with pytest.raises(RuntimeError, match="None"):
        npu_combine_tensors([torch.ones(2, device="npu"), None])
    with pytest.raises(RuntimeError, match="ERR00003"):
        get_part_combined_tensor(torch.ones(4, device="npu"), 2, 3)
