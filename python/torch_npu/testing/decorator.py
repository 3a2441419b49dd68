"""Parametrizing decorators of torch_npu's tests: ``Dtypes``, ``Formats``, ``instantiate_tests``.

::

    @instantiate_tests
    class TestAdd(TestCase):
        @Dtypes(torch.float, torch.half)
        @Formats(0, 2)
        def test_add(self, device, dtype, npu_format): ...

makes ``test_add_float32_0``, ``test_add_float32_2``, ``test_add_float16_0``, ... (one per
combination, dtype before format as in torch_npu) and removes ``test_add``. A test
argument receives the value whose key (``dtype`` / ``format``) its name contains;
``device`` receives ``"npu"``.
"""

import inspect
import itertools
from collections.abc import Callable
from functools import wraps
from typing import Any

import torch

__all__ = ["Dtypes", "Formats", "instantiate_tests"]


class Dtypes:
    """Run the decorated test once per given ``torch.dtype``."""

    def __init__(self, *args: torch.dtype):
        if not args:
            raise ValueError("No dtypes given")
        if not all(isinstance(arg, torch.dtype) for arg in args):
            raise TypeError(f"Unknown dtype in {args}")
        self.args = args

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.dtypes = self.args
        return fn


class Formats:
    """Run the decorated test once per given npu format (an int, e.g. 0 NCHW, 2 ND, 29 NZ)."""

    def __init__(self, *args: int):
        if not args:
            raise ValueError("No formats given")
        self.args = args

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.formats = self.args
        return fn


def _bind(func: Callable[..., Any], name: str, kwargs: dict[str, Any]) -> Callable[..., Any]:
    @wraps(func)
    def test(self: Any) -> Any:
        return func(self, **kwargs)

    test.__name__ = name
    test.__qualname__ = name
    return test


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).split(".")[1]


def instantiate_tests(cls: type) -> type:
    """Replace each ``@Dtypes`` / ``@Formats`` test of ``cls`` by one test per combination."""
    for name, func in list(vars(cls).items()):
        data: dict[str, tuple[Any, ...]] = {}
        if hasattr(func, "dtypes"):
            data["dtype"] = func.dtypes
        if hasattr(func, "formats"):
            data["format"] = func.formats
        if not data:
            continue
        params = list(inspect.signature(func).parameters)
        for values in itertools.product(*data.values()):
            kwargs: dict[str, Any] = {"device": "npu"} if "device" in params else {}
            test_name = name
            for key, value in zip(data, values):
                test_name += f"_{value}" if key == "format" else f"_{_dtype_name(value)}"
                matches = [param for param in params if key in param]
                if len(matches) != 1:
                    raise TypeError(f"{cls.__name__}.{name}: expected one argument naming '{key}', found {matches}")
                kwargs[matches[0]] = value
            setattr(cls, test_name, _bind(func, test_name, kwargs))
        delattr(cls, name)
    return cls
