"""torch_npu.distributed.all_to_all_vc on 2 hccl ranks against the CPU all_to_all of the same rows."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "distributed"))

from spawn_ranks import run_ranks  # noqa: E402

# Entry i*2+j: rows rank i sends rank j.
MATRIX = [1, 2, 3, 0]


def rows_of(rank: int, count: int, torch):
    return torch.arange(count * 3, dtype=torch.float32).reshape(count, 3) + 100 * rank


def exchange(rank: int, world: int) -> str:
    import torch
    import torch.distributed as dist

    import torch_npu

    torch.npu.set_device(rank)
    dist.init_process_group("cpu:gloo,npu:hccl")
    try:
        sent = rows_of(rank, MATRIX[rank * 2] + MATRIX[rank * 2 + 1], torch)
        received = MATRIX[rank] + MATRIX[2 + rank]
        out = torch.empty(received, 3).npu()
        torch_npu.distributed.all_to_all_vc(out, sent.npu(), MATRIX)
        reference = torch.empty(received, 3)
        dist.all_to_all_single(reference, sent, output_split_sizes=[MATRIX[rank], MATRIX[2 + rank]],
                               input_split_sizes=MATRIX[rank * 2:rank * 2 + 2])
        torch.testing.assert_close(out.cpu(), reference)
        work = torch_npu.distributed.all_to_all_vc(out, sent.npu(), torch.tensor(MATRIX), async_op=True)
        work.wait()
        torch.testing.assert_close(out.cpu(), reference)
        for bad, error in (([1, 2, 3], ValueError), ([1.0, 2, 3, 0], TypeError), ([2, 2, 4, 0], ValueError)):
            try:
                torch_npu.distributed.all_to_all_vc(out, sent.npu(), bad)
            except error as e:
                assert "ERR02" in str(e), str(e)
            else:
                raise AssertionError(f"{bad} was accepted")
        return "ok"
    finally:
        dist.destroy_process_group()


def test_all_to_all_vc_matches_the_cpu_all_to_all():
    assert run_ranks(exchange, 2) == ["ok", "ok"]
