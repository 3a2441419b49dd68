"""DDP and FSDP2 on 2 npu ranks reproduce single-process training on the whole batch."""
import copy
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
from torch.testing import assert_close

from spawn_ranks import run_ranks

STEPS, LOCAL_BATCH, LR = 3, 4, 0.1


def make_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))


def make_data(world: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    return torch.randn(world * LOCAL_BATCH, 8, generator=g), torch.randn(world * LOCAL_BATCH, 4, generator=g)


def train(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    for _ in range(STEPS):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()


def local_batch(rank: int, world: int) -> tuple[torch.Tensor, torch.Tensor]:
    x, y = make_data(world)
    rows = slice(rank * LOCAL_BATCH, (rank + 1) * LOCAL_BATCH)
    return x[rows].npu(), y[rows].npu()


def ddp_rank(rank: int, world: int) -> list[np.ndarray]:
    from torch.nn.parallel import DistributedDataParallel

    dist.init_process_group("hccl", timeout=timedelta(seconds=60))
    model = DistributedDataParallel(make_model().npu())
    train(model, *local_batch(rank, world))
    params = [p.detach().cpu().numpy() for p in model.module.parameters()]
    dist.destroy_process_group()
    return params


def fsdp_rank(rank: int, world: int) -> list[np.ndarray]:
    from torch.distributed.fsdp import fully_shard

    dist.init_process_group("hccl", timeout=timedelta(seconds=60))
    model = make_model().npu()
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer)
    fully_shard(model)
    train(model, *local_batch(rank, world))
    params = [p.full_tensor().detach().cpu().numpy() for p in model.parameters()]
    dist.destroy_process_group()
    return params


def reference(world: int) -> list[torch.Tensor]:
    model = make_model()
    train(model, *make_data(world))
    return [p.detach() for p in model.parameters()]


def test_ddp_matches_single_process_on_concatenated_batch() -> None:
    want = reference(2)
    for params in run_ranks(ddp_rank, 2):
        for got, w in zip(params, want):
            assert_close(torch.from_numpy(got), w, rtol=1e-5, atol=1e-5)


def test_fsdp2_fully_shard_trains_like_single_process() -> None:
    want = reference(2)
    start = [p.detach() for p in make_model().parameters()]
    for params in run_ranks(fsdp_rank, 2):
        for got, w, s in zip(params, want, start):
            assert_close(torch.from_numpy(got), w, rtol=1e-5, atol=1e-5)
            assert not torch.equal(torch.from_numpy(got), s)
