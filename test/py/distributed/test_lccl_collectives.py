"""Every collective on the lccl backend (2 and 4 ranks), against CPU values and against hccl."""
import traceback
from datetime import timedelta

import pytest
import torch
import torch.distributed as dist
from torch.testing import assert_close

import collective_checks
from spawn_ranks import run_ranks

# hccl-only checks: reinit rebuilds hccl's Gloo transport; the CPU-tensor message names hccl.
HCCL_ONLY = {"reinit", "cpu_tensor_rejected"}
CHECKS = {name: fn for name, fn in collective_checks.CHECKS.items() if name not in HCCL_ONLY}


def check_cpu_tensor_rejected(rank, world):
    backend = dist.group.WORLD._get_backend(torch.device("npu"))
    with pytest.raises(Exception, match="ERR02001") as info:
        backend.allreduce([torch.ones(4)], dist.AllreduceOptions())
    assert "cpu:gloo,npu:lccl" in str(info.value)


def check_matches_hccl(rank, world):
    # Non-integer values, so a different summation order would show: lccl and hccl agree.
    hccl = dist.new_group(backend="hccl")
    for dtype in (torch.float32, torch.bfloat16):
        gen = torch.Generator().manual_seed(rank)
        x = torch.randn(1000, generator=gen).to(dtype).npu()
        via_lccl, via_hccl = x.clone(), x.clone()
        dist.all_reduce(via_lccl)
        dist.all_reduce(via_hccl, group=hccl)
        if dtype == torch.float32:
            assert_close(via_lccl.cpu(), via_hccl.cpu())
        else:  # bfloat16 sums round at every step, and the two add in different orders
            assert_close(via_lccl.cpu().float(), via_hccl.cpu().float(), atol=0.125, rtol=0.02)
        gathered_l = torch.zeros(world * 1000, dtype=dtype).npu()
        gathered_h = torch.zeros(world * 1000, dtype=dtype).npu()
        dist.all_gather_into_tensor(gathered_l, x)
        dist.all_gather_into_tensor(gathered_h, x, group=hccl)
        assert torch.equal(gathered_l.cpu(), gathered_h.cpu())
    dist.destroy_process_group(hccl)


def check_large_all_reduce_uneven_length(rank, world):
    # Slices of unequal length (numel not a multiple of the world) and several segments.
    n = (3 << 20) + 7
    t = torch.full((n,), float(rank + 1)).npu()
    dist.all_reduce(t)
    assert_close(t.cpu(), torch.full((n,), float(sum(range(1, world + 1)))))


CHECKS.update(cpu_tensor_rejected=check_cpu_tensor_rejected, matches_hccl=check_matches_hccl,
              large_all_reduce_uneven_length=check_large_all_reduce_uneven_length)


def run_lccl_checks(rank: int, world: int) -> dict[str, str | None]:
    spec = "cpu:gloo,npu:lccl" if world == 2 else "lccl"
    dist.init_process_group(spec, timeout=timedelta(seconds=60))
    assert dist.group.WORLD._get_backend(torch.device("npu")).name() == "lccl"
    outcome = {}
    for name, check in CHECKS.items():
        try:
            check(rank, world)
            outcome[name] = None
        except Exception:  # noqa: BLE001 - reported per check to the parent
            outcome[name] = traceback.format_exc()
    dist.destroy_process_group()
    return outcome


_outcomes: dict[int, list[dict]] = {}


def outcomes(world: int) -> list[dict]:
    if world not in _outcomes:
        _outcomes[world] = run_ranks(run_lccl_checks, world)
    return _outcomes[world]


@pytest.mark.parametrize("world", [2, 4])
@pytest.mark.parametrize("check", sorted(CHECKS))
def test_lccl_collective(check: str, world: int) -> None:
    failures = [f"rank {r}:\n{o[check]}" for r, o in enumerate(outcomes(world)) if o[check]]
    assert not failures, "\n".join(failures)
