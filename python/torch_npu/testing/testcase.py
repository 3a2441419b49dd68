r"""torch_npu's ``TestCase`` and ``run_tests``.

Importing this module initializes no NPU: test_distributed-style suites fork worker
processes after importing it. The device is selected in ``setUpClass``.

``TestCase`` is an ``expecttest.TestCase`` (so ``assertExpectedInline`` works) whose
``assertEqual`` compares tensors, numpy arrays, numbers and nested sequences within
``precision`` (max absolute difference, default 1e-5), moving both sides to the first
tensor's device and dtype unless ``exact_dtype`` is set; ``assertRtolEqual`` is
torch_npu's relative check for NPU-vs-CPU results.
"""

import os
import random
import re
import sys
import time
import unittest
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from numbers import Number
from typing import Any
from unittest.result import TestResult
from unittest.util import strclass

import expecttest
import numpy as np
import torch

from torch_npu.testing.common_utils import PERF_TEST_ENABLE, PerfBaseline, is_iterable, iter_indices, set_npu_device

__all__ = ["TestCase", "run_tests"]

# A test is slower than its baseline when it takes more than this factor longer...
_PERF_TOLERANCE = 1.2
# ...and a run this much faster becomes the new baseline.
_PERF_IMPROVEMENT = 0.9

# assertRtolEqual's floor under |x|, |y| in the relative error, by precision class.
_RTOL_MINIMUM = 10e-10
_RTOL_MINIMUM16 = 6e-8
_RTOL_DTYPES = (np.bool_, np.uint16, np.int16, np.int32, np.float16, np.float32, np.int8, np.uint8, np.int64,
                np.float64)


def run_tests() -> None:
    """Run the calling module's tests with unittest (``python test_x.py [-k name] [-v]``)."""
    unittest.main(argv=sys.argv)


def _to_numpy(t: torch.Tensor) -> np.ndarray:
    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16: compared as float32 with the half tolerance
        t = t.float()
    return t.numpy()


class TestCase(expecttest.TestCase):
    """A unittest case with torch_npu's comparisons; see the module docstring."""

    _precision = 1e-5
    maxDiff = None
    exact_dtype = False

    def __init__(self, method_name: str = "runTest"):
        super().__init__(method_name)

    @property
    def precision(self) -> float:
        """Absolute tolerance of :meth:`assertEqual` when no ``prec`` is given."""
        return self._precision

    @precision.setter
    def precision(self, prec: float) -> None:
        self._precision = prec

    @classmethod
    def setUpClass(cls) -> None:
        cls.npu_device = set_npu_device()

    def setUp(self) -> None:
        """Seed torch, Python's and numpy's generators from ``SEED`` (default 666)."""
        seed = int(os.getenv("SEED", "666"))
        torch.manual_seed(seed)
        random.seed(seed)
        np.random.seed(seed)

    # ------------------------------------------------------------ relative comparison
    def assertRtolEqual(
        self,
        x: Any,
        y: Any,
        prec: float = 1.0e-4,
        prec16: float = 1.0e-3,
        auto_trans_dtype: bool = False,
        message: str | None = None,
    ) -> None:
        """Fail when more than ``size * prec`` elements exceed both the absolute and relative tolerance.

        Args:
            x, y: tensors (any device), numpy arrays, numbers or sequences of them.
            prec: tolerance for float32/float64/integers; ``prec16`` for float16 and bfloat16.
            auto_trans_dtype: cast ``x`` to ``y``'s dtype first (otherwise dtypes must match).
        """
        if isinstance(x, Sequence) and isinstance(y, Sequence):
            self.assertEqual(len(x), len(y), message or "length error")
            for x_, y_ in zip(x, y):
                self.assertRtolEqual(x_, y_, prec, prec16, auto_trans_dtype, message)
            return
        if isinstance(x, torch.Tensor) and isinstance(y, Sequence):
            y = torch.as_tensor(y, dtype=x.dtype, device=x.device)
        elif isinstance(x, Sequence) and isinstance(y, torch.Tensor):
            x = torch.as_tensor(x, dtype=y.dtype, device=y.device)
        half = False
        if torch.is_tensor(x) and torch.is_tensor(y):
            if auto_trans_dtype:
                x = x.to(y.dtype)
            half = torch.bfloat16 in (x.dtype, y.dtype)
            x, y = _to_numpy(x), _to_numpy(y)
        elif isinstance(x, Number) and isinstance(y, Number):
            x, y = np.array(x), np.array(y)
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape:
            self.fail(message or f"shape error: {x.shape} vs {y.shape}")
        if x.dtype != y.dtype:
            self.fail(message or f"dtype error: {x.dtype} vs {y.dtype}")
        if x.dtype.type not in _RTOL_DTYPES:
            self.fail(message or f"required dtype in {[d.__name__ for d in _RTOL_DTYPES]}, got {x.dtype}")
        if x.dtype == np.bool_:
            if not np.equal(x, y).all():
                self.fail(message or "result error")
            return
        if x.dtype == np.float16 or half:
            tolerance, minimum = prec16, _RTOL_MINIMUM16
        else:
            tolerance, minimum = prec, _RTOL_MINIMUM
        x64, y64 = x.astype(np.float64), y.astype(np.float64)
        error = np.abs(y64 - x64)
        relative = error / (np.maximum(np.abs(x64), np.abs(y64)) + minimum)
        # NaNs compare equal to NaNs (same positions), infinities to the same infinity.
        same = (x64 == y64) | (np.isnan(x64) & np.isnan(y64))
        atol_bad = ~(same | (error <= tolerance))
        rtol_bad = ~(same | (relative <= tolerance))
        allowed = x.size * tolerance
        if atol_bad.sum() > allowed and rtol_bad.sum() > allowed:
            worst = int(np.argmax(np.where(np.isnan(error), np.inf, error)))
            self.fail(
                message
                or f"result error: {int(rtol_bad.sum())} of {x.size} elements differ beyond {tolerance} "
                f"(worst at flat index {worst}: {x.flat[worst]} vs {y.flat[worst]})"
            )

    # ------------------------------------------------------------ absolute comparison
    def _assert_tensor_equal(
        self, a: torch.Tensor, b: torch.Tensor, message: str, exact_dtype: bool, allow_inf: bool, prec: float
    ) -> None:
        super().assertEqual(a.size(), b.size(), message)
        if exact_dtype:
            super().assertEqual(a.dtype, b.dtype, message)
        if a.numel() == 0:
            return
        if (a.dtype == torch.bool) != (b.dtype == torch.bool):
            raise TypeError("Was expecting both tensors to be bool type.")
        # Compared on the host in a dtype both fit: devices and dtypes may differ unless exact_dtype.
        a = a.detach().cpu()
        b = b.detach().cpu()
        if a.dtype in (torch.float16, torch.bfloat16):
            a = a.float()
        b = b.to(a.dtype)
        if a.dtype == torch.bool:
            a, b = a.int(), b.int()
        diff = a - b if not a.dtype.is_complex else (a - b).abs()
        if a.dtype.is_floating_point or a.dtype.is_complex:
            nan_mask = torch.isnan(a)
            self.assertTrue(torch.equal(nan_mask, torch.isnan(b)), message or "NaNs are in different positions")
            diff[nan_mask] = 0
            if allow_inf:
                inf_mask = torch.isinf(a)
                self.assertTrue(torch.equal(inf_mask * a.sign(), torch.isinf(b) * b.sign()), message)
                diff[inf_mask] = 0
        if diff.is_signed():
            diff = diff.abs()
        max_err = diff.max().item()
        if not max_err <= prec:
            self.fail(message or f"Tensors differ: max abs difference {max_err} > {prec}")

    def _assert_number_equal(self, x: Any, y: Any, prec: float, message: str, allow_inf: bool) -> None:
        if isinstance(x, torch.Tensor):
            x = x.item()
        if isinstance(y, torch.Tensor):
            y = y.item()
        if isinstance(x, np.ndarray):
            x = x.item()
        if isinstance(y, np.ndarray):
            y = y.item()
        if abs(x) == float("inf") or abs(y) == float("inf"):
            if allow_inf:
                super().assertEqual(x, y, message)
            else:
                self.fail(f"Expected finite numeric values - x={x}, y={y}")
            return
        if x != x and y != y:  # both NaN
            return
        super().assertLessEqual(abs(x - y), prec, message)

    def assertEqual(
        self,
        x: Any,
        y: Any,
        prec: float | str | None = None,
        message: str = "",
        allow_inf: bool = False,
        exact_dtype: bool | None = None,
        **kwargs: Any,
    ) -> None:
        """Assert ``x`` equals ``y`` within ``prec`` (default :attr:`precision`).

        Tensors (any devices; dtypes must match only with ``exact_dtype``), numpy arrays,
        numbers, bools, strings, sets, dicts and nested sequences. ``prec`` may be given
        as the message (a str), as torch_npu allows; ``msg=`` is accepted as ``message``.
        """
        message = kwargs.pop("msg", None) or message
        if kwargs:
            raise TypeError(f"assertEqual() got unexpected keyword arguments {sorted(kwargs)}")
        if exact_dtype is None:
            exact_dtype = self.exact_dtype
        if isinstance(prec, str) and message == "":
            message, prec = prec, None
        if prec is None:
            prec = self.precision
        self._assert_equal(x, y, prec, message, allow_inf, exact_dtype)

    def _assert_equal(self, x: Any, y: Any, prec: float, message: str, allow_inf: bool, exact_dtype: bool) -> None:
        if isinstance(x, np.ndarray) and x.dtype != object:
            x = torch.from_numpy(np.ascontiguousarray(x))
        if isinstance(y, np.ndarray) and y.dtype != object:
            y = torch.from_numpy(np.ascontiguousarray(y))
        if isinstance(x, np.generic):
            x = x.item()
        if isinstance(y, np.generic):
            y = y.item()
        if isinstance(x, bool) and isinstance(y, bool):
            super().assertEqual(x, y, message)
        elif isinstance(x, Number) or isinstance(y, Number):
            if isinstance(x, torch.Tensor) and x.numel() != 1 or isinstance(y, torch.Tensor) and y.numel() != 1:
                other = x if isinstance(x, torch.Tensor) else y
                self.fail(message or f"cannot compare a number with a tensor of {other.numel()} elements")
            self._assert_number_equal(x, y, prec, message, allow_inf)
        elif isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            super().assertEqual(x.is_sparse, y.is_sparse, message)
            if x.is_sparse:
                x, y = x.coalesce(), y.coalesce()
                self._assert_tensor_equal(x._indices(), y._indices(), message, exact_dtype, allow_inf, prec)
                self._assert_tensor_equal(x._values(), y._values(), message, exact_dtype, allow_inf, prec)
            else:
                self._assert_tensor_equal(x, y, message, exact_dtype, allow_inf, prec)
        elif isinstance(x, (str, bytes)) and isinstance(y, (str, bytes)):
            super().assertEqual(x, y, message)
        elif isinstance(x, set) and isinstance(y, set):
            super().assertEqual(x, y, message)
        elif isinstance(x, dict) and isinstance(y, dict):
            if isinstance(x, OrderedDict) and isinstance(y, OrderedDict):
                self._assert_equal(list(x.items()), list(y.items()), prec, message, allow_inf, exact_dtype)
            else:
                super().assertEqual(set(x), set(y), message)
                for key in x:
                    self._assert_equal(x[key], y[key], prec, message, allow_inf, exact_dtype)
        elif is_iterable(x) and is_iterable(y) and not isinstance(x, torch.Tensor) and not isinstance(y, torch.Tensor):
            x, y = list(x), list(y)
            super().assertEqual(len(x), len(y), message)
            for x_, y_ in zip(x, y):
                self._assert_equal(x_, y_, prec, message, allow_inf, exact_dtype)
        elif isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor) and is_iterable(x) and is_iterable(y):
            tensor = x if isinstance(x, torch.Tensor) else y
            other = torch.as_tensor(y if tensor is x else x, dtype=tensor.dtype)
            self._assert_equal(tensor, other, prec, message, allow_inf, exact_dtype)
        else:
            super().assertEqual(x, y, message)

    def assertAlmostEqual(
        self, x: Any, y: Any, places: int | None = None, msg: str | None = None, delta: float | None = None,
        allow_inf: bool = False,
    ) -> None:
        """``assertEqual`` with ``prec = 10 ** -places`` or ``delta``."""
        prec = 10 ** (-places) if places else delta
        self.assertEqual(x, y, prec, msg or "", allow_inf)

    def assertNotEqual(self, x: Any, y: Any, prec: float | str | None = None, message: str = "") -> None:
        """Assert ``x`` and ``y`` differ by at least ``prec`` somewhere (tensors, numbers) or differ."""
        if isinstance(prec, str) and message == "":
            message, prec = prec, None
        if prec is None:
            prec = self.precision
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
            if x.size() != y.size():
                return
            self.assertGreater(x.numel(), 0)
            a, b = x.detach().cpu().double(), y.detach().cpu().double()
            nan_mask = torch.isnan(a)
            if not torch.equal(nan_mask, torch.isnan(b)):
                return
            diff = (a - b).abs()
            diff[nan_mask] = 0
            self.assertGreaterEqual(diff.max().item(), prec, message)
        elif isinstance(x, Number) and isinstance(y, Number) and not isinstance(x, bool):
            self.assertGreaterEqual(abs(x - y), prec, message)
        else:
            super().assertNotEqual(x, y, message)

    def assertTensorsSlowEqual(self, x: torch.Tensor, y: torch.Tensor, prec: float | None = None,
                               message: str = "") -> None:
        """Element-by-element :meth:`assertEqual` of two same-shaped, same-dtype tensors."""
        self.assertEqual(x.size(), y.size())
        self.assertEqual(x.dtype, y.dtype)
        prec = self.precision if prec is None else prec
        y = y.type_as(x)
        if x.dtype == torch.bool:
            self.assertEqual(x, y)
            return
        max_err = 0.0
        for index in iter_indices(x):
            max_err = max(max_err, abs(float(x[index]) - float(y[index])))
        self.assertLessEqual(max_err, prec, message)

    def assertObjectIn(self, obj: Any, iterable: Any) -> None:
        """Assert ``obj`` itself (by identity) is an element of ``iterable``."""
        if not any(elem is obj for elem in iterable):
            raise AssertionError("object not found in iterable")

    def assertExpectedRaises(self, exc_type: type[BaseException], call_fn: Callable[..., Any], *args: Any,
                             **kwargs: Any) -> None:
        """Assert ``call_fn`` raises ``exc_type`` whose message matches the recorded expect file."""
        subname = kwargs.pop("subname", None)
        try:
            call_fn(*args, **kwargs)
        except exc_type as e:
            self.assertExpected(str(e), subname)
            return
        self.fail(msg="Did not raise when expected to")

    def assertNotWarn(self, call_fn: Callable[[], Any], msg: str = "") -> None:
        """Assert ``call_fn()`` raises no warning."""
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            call_fn()
        self.assertTrue(len(ws) == 0, msg or f"unexpected warnings: {[str(w.message) for w in ws]}")

    def assertWarnsRegex(self, *args: Any, **kwargs: Any) -> Any:
        """torch_npu's ``assertWarnsRegex(call_fn, regex, msg='')``, or unittest's form with a warning class."""
        if args and isinstance(args[0], type) and issubclass(args[0], Warning):
            return super().assertWarnsRegex(*args, **kwargs)
        call_fn, regex = args[0], args[1]
        msg = args[2] if len(args) > 2 else kwargs.get("msg", "")
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            call_fn()
        self.assertTrue(len(ws) > 0, msg or "no warning was raised")
        self.assertTrue(any(re.search(regex, str(w.message)) for w in ws), msg or f"no warning matched {regex!r}")

    @contextmanager
    def maybeWarnsRegex(self, category: type[Warning], regex: str = "") -> Iterator[None]:
        """Allow warnings of ``category`` matching ``regex`` in the block; fail on any other warning."""
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            warnings.filterwarnings("ignore", message=regex, category=category)
            yield
        if ws:
            self.fail("Caught unexpected warnings:\n" + "\n".join(
                warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line) for w in ws))

    def assertExpectedStripMangled(self, s: str, subname: str | None = None) -> None:
        """``assertExpected`` with TorchScript's ``__torch__...`` mangling removed."""
        self.assertExpected(re.sub(r"__torch__[^ ]+", "", s), subname)

    def run(self, result: TestResult | None = None) -> Any:
        """Run the test; with ``PERF_TEST_ENABLE`` run it again timed against :data:`PerfBaseline`."""
        outcome = super().run(result)
        if not PERF_TEST_ENABLE:
            return outcome
        timed = TestResult()
        start = time.perf_counter()
        super().run(timed)
        runtime = time.perf_counter() - start
        if timed.errors or timed.failures:
            return outcome
        method_id = strclass(self.__class__) + "." + self._testMethodName
        baseline = PerfBaseline.get_baseline(method_id)
        if baseline and runtime > baseline * _PERF_TOLERANCE and result is not None:
            error = self.failureException(
                f"Performance test failed. Performance baseline: {baseline}s, current time: {runtime}s")
            result.addFailure(self, (self.failureException, error, None))
        if baseline is None or runtime < baseline * _PERF_IMPROVEMENT:
            PerfBaseline.set_baseline(method_id, runtime)
        return outcome
