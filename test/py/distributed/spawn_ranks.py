"""Runs a function on N local ranks in fresh 'spawn' processes and collects what each returns."""
import multiprocessing as mp
import os
import queue
import socket
import traceback
from collections.abc import Callable
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_entry(target: Callable, rank: int, world_size: int, port: int, results: mp.Queue, args: tuple) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      WORLD_SIZE=str(world_size), LOCAL_RANK=str(rank))
    try:
        import torch_npu  # noqa: F401  (registers the npu device and the hccl backend)

        results.put((rank, True, target(rank, world_size, *args)))
    except BaseException:
        results.put((rank, False, traceback.format_exc()))


def run_ranks(target: Callable, world_size: int, *args: Any, timeout: float = 150.0,
              expect_exit: dict[int, int] | None = None) -> list[Any]:
    """Run ``target(rank, world_size, *args)`` on every rank; return the results by rank.

    Fails with every rank's traceback if a rank raises, and fails (killing the rest)
    if ranks are not done within ``timeout`` seconds. Ranks listed in ``expect_exit``
    are expected to die with that exit code instead of returning.
    """
    expect_exit = expect_exit or {}
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=rank_entry, args=(target, r, world_size, port, results, args))
             for r in range(world_size)]
    for p in procs:
        p.start()
    collected: dict[int, tuple[bool, Any]] = {}
    try:
        while len(collected) < world_size - len(expect_exit):
            rank, ok, value = results.get(timeout=timeout)
            collected[rank] = (ok, value)
        for p in procs:
            p.join(timeout=30)
    except queue.Empty:
        raise AssertionError(f"ranks {sorted(set(range(world_size)) - set(collected))} hung for {timeout} s") from None
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join()
    failures = [f"rank {r}:\n{v}" for r, (ok, v) in sorted(collected.items()) if not ok]
    assert not failures, "\n".join(failures)
    for r, code in expect_exit.items():
        assert procs[r].exitcode == code, f"rank {r} exited with {procs[r].exitcode}, expected {code}"
    hung = [r for r, p in enumerate(procs) if r not in expect_exit and p.exitcode != 0]
    assert not hung, f"ranks {hung} did not exit cleanly: exit codes {[procs[r].exitcode for r in hung]}"
    return [collected[r][1] if r in collected else None for r in range(world_size)]
