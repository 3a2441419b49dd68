"""Bad input to the torch_npu.distributed extras fails with an ERR02xxx code and says what to do."""
import pytest
import torch

import torch_npu.distributed as npu_dist
from torch_npu.distributed.hccl_backend import rank_device
from torch_npu.distributed.uneven import split_sizes


def test_uneven_split_without_sizes_needs_sizes() -> None:
    with pytest.raises(ValueError, match=r"pass the split sizes[\s\S]*ERR02001"):
        split_sizes(7, None, 2, "reduce_scatter_tensor_uneven")


@pytest.mark.parametrize("sizes", [[1, 2], [3, 3, 1], [8, -1]])
def test_uneven_split_sizes_must_cover_dim0(sizes: list[int]) -> None:
    with pytest.raises(ValueError, match="ERR02001"):
        split_sizes(7, sizes, 2, "all_gather_into_tensor_uneven")


def test_uneven_split_sizes_accepted() -> None:
    assert split_sizes(7, [3, 4], 2, "x") == [3, 4]
    assert split_sizes(8, None, 4, "x") == [2, 2, 2, 2]


def test_reinit_without_a_group() -> None:
    with pytest.raises(RuntimeError, match=r"init_process_group first[\s\S]*ERR02008"):
        npu_dist.reinit_process_group()


def test_local_rank_beyond_visible_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_RANK", str(torch.accelerator.device_count()))
    with pytest.raises(RuntimeError, match=r"nproc-per-node[\s\S]*ERR02003"):
        rank_device()


def test_local_rank_selects_the_device(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert rank_device() == 1
