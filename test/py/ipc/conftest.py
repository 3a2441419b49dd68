"""One spawned peer process serves every IPC test (spawning and importing torch_npu costs seconds)."""
import os

import pytest
import torch

import torch_npu  # noqa: F401
from ipc_peer import Peer

SPAWNED_VALUES = torch.arange(10, dtype=torch.float32)


@pytest.fixture(scope="session")
def shm_before() -> set[str]:
    return set(os.listdir("/dev/shm"))


@pytest.fixture(scope="session")
def spawned_tensor(shm_before) -> torch.Tensor:
    return SPAWNED_VALUES.npu()


@pytest.fixture(scope="session")
def peer(spawned_tensor) -> Peer:
    """The peer, started with ``spawned_tensor`` among its spawn arguments (held as "spawned")."""
    p = Peer({"spawned": spawned_tensor})
    yield p
    p.close()


@pytest.fixture(scope="session")
def second_peer() -> Peer:
    """A third process, for tensors sent on by a process that received them."""
    p = Peer({})
    yield p
    p.close()
