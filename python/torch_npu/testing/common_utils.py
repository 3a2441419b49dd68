"""Tensor builders, device selection and skip decorators of torch_npu's test suite.

Nothing here touches a device at import time: ``get_npu_device`` only reads
``SET_NPU_DEVICE``, and the decorators query the device when the test runs.
"""

import atexit
import json
import os
import re
import stat
import sys
import threading
import unittest
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import wraps
from itertools import product
from typing import Any

import numpy as np
import torch

__all__ = [
    "IS_WINDOWS",
    "PERF_BASELINE_FILE",
    "PERF_TEST_ENABLE",
    "PerfBaseline",
    "SupportedDevices",
    "check_operators_in_prof",
    "create_common_tensor",
    "create_dtype_tensor",
    "freeze_rng_state",
    "get_npu_device",
    "is_iterable",
    "iter_indices",
    "set_npu_device",
    "skipIfUnsupportMultiNPU",
    "test_2args_broadcast",
]

IS_WINDOWS = sys.platform == "win32"

# A format of -1 means "keep what .to(device) gave", as in torch_npu's item lists.
_KEEP_FORMAT = -1


@contextmanager
def freeze_rng_state() -> Iterator[None]:
    """Restore the CPU and (if initialized) NPU random state on exit."""
    cpu_state = torch.get_rng_state()
    npu_state = torch.npu.get_rng_state() if torch.npu.is_initialized() else None
    try:
        yield
    finally:
        torch.set_rng_state(cpu_state)
        if npu_state is not None:
            torch.npu.set_rng_state(npu_state)


def iter_indices(tensor: torch.Tensor) -> Iterable[Any]:
    """Every index of ``tensor``: ints for 1-D, tuples beyond, nothing for 0-D."""
    if tensor.dim() == 0:
        return range(0)
    if tensor.dim() == 1:
        return range(tensor.size(0))
    return product(*(range(s) for s in tensor.size()))


def is_iterable(obj: Any) -> bool:
    """Whether ``iter(obj)`` works."""
    try:
        iter(obj)
        return True
    except TypeError:
        return False


def get_npu_device() -> str:
    """The device tests run on: ``"npu:<SET_NPU_DEVICE>"``, ``"npu:0"`` by default."""
    index = os.environ.get("SET_NPU_DEVICE")
    return "npu:0" if index is None else f"npu:{index}"


def set_npu_device() -> str:
    """Select :func:`get_npu_device` as the current NPU and return its name."""
    device = get_npu_device()
    torch.npu.set_device(device)
    return device


def _cast_format(tensor: torch.Tensor, npu_format: int) -> torch.Tensor:
    import torch_npu

    return tensor if npu_format == _KEEP_FORMAT else torch_npu.npu_format_cast(tensor, npu_format)


def create_common_tensor(
    item: tuple[Any, int, Any], minValue: float, maxValue: float, device: str | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ``(cpu, npu)`` copies of one uniform random array.

    Args:
        item: ``(numpy dtype, npu format, shape)``; format -1 keeps the default format,
            any other is applied with ``torch_npu.npu_format_cast``.
        minValue, maxValue: the range of ``np.random.uniform``.
        device: the NPU (default :func:`get_npu_device`).
    """
    dtype, npu_format, shape = item[0], item[1], item[2]
    data = np.random.uniform(minValue, maxValue, shape).astype(dtype)
    cpu_input = torch.from_numpy(data)
    npu_input = _cast_format(torch.from_numpy(data).to(device or get_npu_device()), npu_format)
    return cpu_input, npu_input


def create_dtype_tensor(
    shape: Any,
    dtype: torch.dtype,
    npu_format: int = _KEEP_FORMAT,
    min_value: int = -5,
    max_value: int = 5,
    no_zero: bool = False,
    device: str | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ``(cpu, npu)`` copies of random data of a torch dtype.

    bool: 0/1; half and float: uniform in ``[min_value, max_value)``; any other dtype:
    int32 integers in ``[min_value, max_value]`` (as torch_npu). ``no_zero`` replaces
    zeros by ones; ``npu_format`` applies to floating dtypes only.
    """
    if dtype == torch.bool:
        data = np.random.randint(0, 2, size=shape).astype(bool)
    elif dtype == torch.half:
        data = np.random.uniform(min_value, max_value, shape).astype(np.float16)
    elif dtype == torch.float:
        data = np.random.uniform(min_value, max_value, shape).astype(np.float32)
    else:
        data = np.random.randint(min_value, max_value + 1, size=shape).astype(np.int32)
    if no_zero:
        data = np.where(data != 0, data, np.ones_like(data))
    cpu_input = torch.from_numpy(data)
    npu_input = torch.from_numpy(data).to(device or get_npu_device())
    if dtype in (torch.float, torch.half):
        npu_input = _cast_format(npu_input, npu_format)
    return cpu_input, npu_input


def test_2args_broadcast(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> list[list[np.ndarray]]:
    """Run ``fn`` on CPU and NPU for two broadcasting cases; return ``[[cpu, npu], ...]`` arrays."""
    outputs = []
    for x_shape, y_shape in (((2, 3, 4, 5), (1, 1, 1)), ((2, 3, 4, 5), (4, 5))):
        x = np.random.rand(*x_shape).astype(np.float32)
        y = np.random.rand(*y_shape).astype(np.float32)
        device = get_npu_device()
        cpu_out = fn(torch.from_numpy(x), torch.from_numpy(y)).numpy()
        npu_out = fn(torch.from_numpy(x).to(device), torch.from_numpy(y).to(device)).cpu().numpy()
        outputs.append([cpu_out, npu_out])
    return outputs


def check_operators_in_prof(
    expected_operators: list[str], prof: Any, unexpected_operators: list[str] | None = None
) -> bool:
    """Whether a profile ran every expected operator and none of the unexpected ones."""
    unexpected = set(unexpected_operators or [])
    remaining = list(expected_operators)
    for event in prof.key_averages():
        if event.key in unexpected:
            return False
        if event.key in remaining:
            remaining.remove(event.key)
    return not remaining


def _skip_unless(condition: Callable[[], bool], reason: str) -> Callable[[Any], Any]:
    """A decorator for test methods or classes that skips when ``condition()`` is false at run time."""

    def decorate(target: Any) -> Any:
        if isinstance(target, type):
            original = target.setUpClass.__func__ if hasattr(target, "setUpClass") else None

            @classmethod
            def setUpClass(cls: type) -> None:
                if not condition():
                    raise unittest.SkipTest(reason)
                if original is not None:
                    original(cls)

            target.setUpClass = setUpClass
            return target

        @wraps(target)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not condition():
                raise unittest.SkipTest(reason)
            return target(*args, **kwargs)

        return wrapper

    return decorate


def skipIfUnsupportMultiNPU(npu_number_needed: int) -> Callable[[Any], Any]:
    """Skip the test (or class) unless at least ``npu_number_needed`` NPUs are visible."""
    return _skip_unless(
        lambda: torch.npu.is_available() and torch.npu.device_count() >= npu_number_needed,
        f"Multi-NPU condition not satisfied: {npu_number_needed} NPUs needed",
    )


def SupportedDevices(device_names: list[str]) -> Callable[[Any], Any]:
    """Run the test (or class) only on the listed SoCs, e.g. ``@SupportedDevices(['Ascend910B'])``.

    A name matches when the device name starts with it (``Ascend910B`` matches the
    simulated ``Ascend910B1``).
    """
    if isinstance(device_names, str) or not all(isinstance(name, str) for name in device_names):
        raise TypeError("SupportedDevices expects a list of SoC names, e.g. ['Ascend910B']")

    def supported() -> bool:
        name = torch.npu.get_device_name()
        return any(re.match(re.escape(soc), name) for soc in device_names)

    return _skip_unless(supported, f"the test runs only on {', '.join(device_names)}")


PERF_TEST_ENABLE = os.getenv("PERF_TEST_ENABLE", default="").upper() in ["ON", "1", "YES", "TRUE", "Y"]
PERF_BASELINE_FILE = os.getenv("PERF_BASELINE_FILE", default=os.path.join(os.getcwd(), "performance_baseline.json"))


class _Baseline:
    """Per-test run times (seconds) kept in a JSON file between runs."""

    def __init__(self, baseline_file: str):
        self._file = baseline_file
        self._baseline: dict[str, float] = {}
        self._mutex = threading.Lock()
        if os.path.exists(baseline_file):
            with open(baseline_file) as f:
                self._baseline = json.load(f)

    def get_baseline(self, resource_id: str) -> float | None:
        return self._baseline.get(resource_id)

    def set_baseline(self, resource_id: str, baseline: float) -> None:
        with self._mutex:
            self._baseline[resource_id] = baseline

    def save_baseline(self) -> None:
        with self._mutex:
            fd = os.open(self._file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, stat.S_IWUSR | stat.S_IRUSR)
            with os.fdopen(fd, "w") as f:
                json.dump(self._baseline, f)


PerfBaseline = _Baseline(PERF_BASELINE_FILE)


@atexit.register
def _dump_baseline() -> None:
    if PERF_TEST_ENABLE:
        PerfBaseline.save_baseline()
