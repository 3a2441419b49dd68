"""lccl's error model: a dead or missing peer is a timeout error naming the rank; other hosts get told to use hccl."""
import os
import signal
import time
from datetime import timedelta

import torch
import torch.distributed as dist

from spawn_ranks import run_ranks

TIMEOUT_S = 3.0


def killed_mid_collective(rank: int, world: int) -> tuple[str, float]:
    dist.init_process_group("lccl", timeout=timedelta(seconds=TIMEOUT_S))
    t = torch.ones(1 << 20, device="npu")
    dist.all_reduce(t)
    if rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    start = time.monotonic()
    try:
        dist.all_reduce(t)
        message = "no error"
    except Exception as e:  # noqa: BLE001 - the message is the result
        message = str(e)
    elapsed = time.monotonic() - start
    try:
        dist.all_reduce(t)  # the group is broken now: fails at once, never hangs
        later = "no error"
    except Exception as e:  # noqa: BLE001
        later = str(e)
    dist.destroy_process_group()
    return message, elapsed, later


def peer_never_arrives(rank: int, world: int) -> tuple[str, float]:
    dist.init_process_group("lccl", timeout=timedelta(seconds=TIMEOUT_S))
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
        time.sleep(TIMEOUT_S + 1.5)
    return message, elapsed


def on_another_host(rank: int, world: int) -> str:
    if rank == 1:
        import torch_npu.distributed.lccl_backend as lccl_backend

        lccl_backend.host_identity = lambda: "elsewhere/boot"
    try:
        dist.init_process_group("lccl", timeout=timedelta(seconds=TIMEOUT_S))
    except Exception as e:  # noqa: BLE001
        return str(e)
    return "no error"


def test_killed_peer_fails_fast_naming_it() -> None:
    survivor, _ = run_ranks(killed_mid_collective, 2, expect_exit={1: -signal.SIGKILL}, timeout=60)
    message, elapsed, later = survivor
    assert "ERR02011" in message and "rank 1" in message and "exited" in message, message
    assert elapsed < TIMEOUT_S, elapsed  # the liveness check, not the timeout
    assert "ERR02009" in later and "failed earlier" in later, later


def test_missing_peer_times_out_naming_it() -> None:
    (message, elapsed), _ = run_ranks(peer_never_arrives, 2, timeout=60)
    assert "ERR02011" in message and "rank 1 did not arrive" in message, message
    assert TIMEOUT_S - 0.5 < elapsed < TIMEOUT_S + 3, elapsed


def test_ranks_on_another_host_are_told_to_use_hccl() -> None:
    messages = run_ranks(on_another_host, 2, timeout=60)
    for message in messages:
        assert "hccl" in message and "ERR02007" in message, message
