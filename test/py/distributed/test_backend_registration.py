"""Registration with c10d, mixed cpu/npu backend specs, and torchrun-style env init."""
from datetime import timedelta

import torch
import torch.distributed as dist

from spawn_ranks import run_ranks


def test_hccl_registered_for_npu() -> None:
    import torch_npu.distributed as npu_dist

    assert npu_dist.is_hccl_available()
    assert dist.Backend.HCCL == "hccl"
    assert dist.Backend.default_device_backend_map["npu"] == "hccl"
    assert dist.Backend.backend_capability["hccl"] == ["npu"]


def mixed_spec(rank: int, world: int) -> tuple[list[float], list[float]]:
    # env:// init, as under torchrun: MASTER_ADDR/PORT, RANK, WORLD_SIZE, LOCAL_RANK are set.
    dist.init_process_group("cpu:gloo,npu:hccl", timeout=timedelta(seconds=60))
    on_cpu = torch.full((3,), float(rank + 1))
    on_npu = torch.full((3,), float(rank + 1), device="npu")
    dist.all_reduce(on_cpu)
    dist.all_reduce(on_npu)
    device = on_npu.device
    dist.destroy_process_group()
    assert device == torch.device("npu", rank), device
    return on_cpu.tolist(), on_npu.cpu().tolist()


def test_mixed_cpu_gloo_npu_hccl() -> None:
    for on_cpu, on_npu in run_ranks(mixed_spec, 2):
        assert on_cpu == [3.0] * 3
        assert on_npu == [3.0] * 3
