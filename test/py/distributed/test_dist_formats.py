"""hccl collectives on tensors stored in internal formats (2 ranks): whole NZ tensors are reduced
and broadcast in their physical layout and keep their format; a view with a storage offset, a
dim-0 concatenation and mixed formats are refused with ERR02007 and the fix (npu_format_cast to ND)."""
import re
from datetime import timedelta

import pytest
import torch
import torch.distributed as dist

from spawn_ranks import run_ranks


def _refused(fn) -> str:
    try:
        fn()
    except RuntimeError as err:
        return str(err)
    return "not refused"


def format_checks(rank: int, world: int) -> dict:
    import torch_npu

    dist.init_process_group("hccl", timeout=timedelta(seconds=60))
    torch.npu.config.allow_internal_format = True
    device = f"npu:{rank}"
    values = [torch.arange(20 * 24, dtype=torch.float32).reshape(20, 24) * (r + 1) for r in range(world)]
    t = torch_npu.npu_format_cast(values[rank].to(device), 29)
    dist.all_reduce(t)
    summed = t.cpu()
    reduced_format = torch_npu.get_npu_format(t)

    b = torch_npu.npu_format_cast(values[rank].to(device), 29)
    dist.broadcast(b, src=1)
    gathered = [torch_npu.npu_format_cast(torch.zeros(20, 24, device=device), 29) for _ in range(world)]
    dist.all_gather(gathered, torch_npu.npu_format_cast(values[rank].to(device), 29))

    whole = torch_npu.npu_format_cast(values[rank].to(device), 29)
    offset_view = torch.empty(0, device=device).set_(whole.untyped_storage(), 16, (10,), (1,))
    into_tensor = torch.zeros(world * 20, 24, device=device)
    mixed = [torch.zeros(20, 24, device=device) for _ in range(world)]
    outcome = {
        "sum": torch.equal(summed, sum(values)),
        "format": reduced_format,
        "broadcast": torch.equal(b.cpu(), values[1]) and torch_npu.get_npu_format(b) == 29,
        "all_gather": all(torch.equal(g.cpu(), v) for g, v in zip(gathered, values)),
        "offset": _refused(lambda: dist.all_reduce(offset_view)),
        "into_tensor": _refused(lambda: dist.all_gather_into_tensor(into_tensor, whole)),
        "mixed": _refused(lambda: dist.all_gather(mixed, whole)),
    }
    dist.destroy_process_group()
    return outcome


@pytest.fixture(scope="module")
def outcomes() -> list[dict]:
    return run_ranks(format_checks, 2)


def test_whole_nz_tensors_are_reduced_broadcast_and_gathered(outcomes: list[dict]) -> None:
    for o in outcomes:
        assert o["sum"] and o["format"] == 29 and o["broadcast"] and o["all_gather"], o


@pytest.mark.parametrize("case,match", [
    ("offset", r"storage offset 16[\s\S]*npu_format_cast\(t, 2\)[\s\S]*ERR02007"),
    ("into_tensor", r"concatenates along dim 0[\s\S]*npu_format_cast\(t, 2\)[\s\S]*ERR02007"),
    ("mixed", r"one format and one shape[\s\S]*ERR02007"),
])
def test_internal_format_misuse_is_refused_with_the_fix(outcomes: list[dict], case: str, match: str) -> None:
    for o in outcomes:
        assert re.search(match, o[case]), o[case]
