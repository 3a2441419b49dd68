"""Helpers of torch_npu's distributed tests: skip decorators and the HCCL-or-Gloo choice."""

import unittest
from collections import namedtuple
from collections.abc import Callable
from functools import wraps
from typing import Any

import torch
import torch.distributed as dist

from torch_npu.testing.common_utils import skipIfUnsupportMultiNPU

__all__ = ["TEST_SKIPS", "TestSkip", "skipIfUnsupportMultiNPU", "skip_if_lt_x_npu", "with_comms"]

TestSkip = namedtuple("TestSkip", "exit_code, message")

# Exit codes a spawned rank returns when it skips, as torch.testing's TEST_SKIPS.
TEST_SKIPS = {
    "multi-npu": TestSkip(75, "Need at least 2 ASCEND devices"),
    **{f"multi-npu-{n}": TestSkip(75, f"Need at least {n} ASCEND devices") for n in range(1, 9)},
    "hccl": TestSkip(76, "c10d not compiled with HCCL support"),
    "known_issues": TestSkip(77, "Test skipped due to known issues"),
}


def skip_if_lt_x_npu(x: int) -> Callable[[Any], Any]:
    """Skip the test unless at least ``x`` NPUs are visible."""
    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        @wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if torch.npu.is_available() and torch.npu.device_count() >= x:
                return func(*args, **kwargs)
            raise unittest.SkipTest(TEST_SKIPS[f"multi-npu-{x}"].message if 1 <= x <= 8 else f"Need {x} NPUs")

        return wrapper

    return decorate


def with_comms(func: Callable[..., Any]) -> Callable[..., Any]:
    """Run a ``MultiProcessTestCase`` method inside a process group: HCCL when NPUs exist, else Gloo.

    The test class provides ``rank``, ``world_size`` and ``file_name`` (as torch's
    ``MultiProcessTestCase`` does); the group is destroyed afterwards.
    """
    if func is None:
        raise RuntimeError("Test function is None.")

    @wraps(func)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        backend = "hccl" if torch.npu.is_available() else "gloo"
        if backend == "hccl":
            torch.npu.set_device(self.rank % torch.npu.device_count())
        dist.init_process_group(backend, init_method=f"file://{self.file_name}", rank=self.rank,
                                world_size=self.world_size)
        try:
            return func(self, *args, **kwargs)
        finally:
            dist.destroy_process_group()

    return wrapper
