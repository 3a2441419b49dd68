"""A collective whose peer died or never arrives fails with ERR02011 in time, and the survivor exits cleanly."""
import os
import signal
import time
from datetime import timedelta

import torch
import torch.distributed as dist

from spawn_ranks import run_ranks

TIMEOUT_S = 3.0


def killed_mid_collective(rank: int, world: int) -> tuple[str, float]:
    dist.init_process_group("hccl", timeout=timedelta(seconds=TIMEOUT_S))
    t = torch.ones(1 << 22, device="npu")
    dist.all_reduce(t)  # both ranks connected and healthy
    if rank == 1:
        dist.all_reduce(t, async_op=True)
        time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGKILL)
    # Rank 1's async all_reduce may finish its half before the kill lands, so
    # rank 0's first all_reduce can succeed; its second has no live peer.
    start = time.monotonic()
    message = "no error"
    for _ in range(2):
        try:
            dist.all_reduce(t)
        except Exception as e:  # noqa: BLE001 - the message is the result
            message = str(e)
            break
    elapsed = time.monotonic() - start
    dist.destroy_process_group()
    return message, elapsed


def peer_never_arrives(rank: int, world: int) -> tuple[str, float]:
    dist.init_process_group("hccl", timeout=timedelta(seconds=TIMEOUT_S))
    t = torch.ones(16, device="npu")
    message, elapsed = "not run", 0.0
    if rank == 0:
        start = time.monotonic()
        try:
            dist.all_reduce(t)
            message = "no error"
        except Exception as e:  # noqa: BLE001
            message = str(e)
        elapsed = time.monotonic() - start
    else:
        time.sleep(TIMEOUT_S + 2)
    dist.destroy_process_group()
    return message, elapsed


def test_peer_killed_mid_collective_fails_with_timeout_error() -> None:
    survivor, _ = run_ranks(killed_mid_collective, 2, expect_exit={1: -signal.SIGKILL}, timeout=60)
    message, elapsed = survivor
    assert "ERR02011" in message, message
    assert elapsed < TIMEOUT_S + 6, elapsed


def test_peer_that_never_arrives_times_out() -> None:
    (message, elapsed), _ = run_ranks(peer_never_arrives, 2, timeout=60)
    assert "ERR02011" in message, message
    assert TIMEOUT_S - 0.5 < elapsed < TIMEOUT_S + 6, elapsed
