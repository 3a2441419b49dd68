"""DDP and FSDP2 on 2 npu ranks reproduce single-process training on the whole batch."""
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


def ddp_then_fsdp2(rank: int, world: int) -> dict[str, list[np.ndarray]]:
    """Train with DDP, then with FSDP2 on the same group; return each run's final parameters."""
    from torch.distributed.fsdp import fully_shard
    from torch.nn.parallel import DistributedDataParallel

    dist.init_process_group("hccl", timeout=timedelta(seconds=60))
    ddp = DistributedDataParallel(make_model().npu())
    train(ddp, *local_batch(rank, world))
    result = {"ddp": [p.detach().cpu().numpy() for p in ddp.module.parameters()]}

    sharded = make_model().npu()
    for layer in sharded:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer)
    fully_shard(sharded)
    train(sharded, *local_batch(rank, world))
    result["fsdp2"] = [p.full_tensor().detach().cpu().numpy() for p in sharded.parameters()]
    dist.destroy_process_group()
    return result


_results: list[dict] = []


def results() -> list[dict]:
    # One group trains both ways: spawning ranks costs more than the training.
    if not _results:
        _results.extend(run_ranks(ddp_then_fsdp2, 2))
    return _results


def reference(world: int) -> list[torch.Tensor]:
    model = make_model()
    train(model, *make_data(world))
    return [p.detach() for p in model.parameters()]


def test_ddp_matches_single_process_on_concatenated_batch() -> None:
    want = reference(2)
    for per_rank in results():
        for got, w in zip(per_rank["ddp"], want):
            assert_close(torch.from_numpy(got), w, rtol=1e-5, atol=1e-5)


def test_fsdp2_fully_shard_trains_like_single_process() -> None:
    want = reference(2)
    start = [p.detach() for p in make_model().parameters()]
    for per_rank in results():
        for got, w, s in zip(per_rank["fsdp2"], want, start):
            assert_close(torch.from_numpy(got), w, rtol=1e-5, atol=1e-5)
            assert not torch.equal(torch.from_numpy(got), s)
