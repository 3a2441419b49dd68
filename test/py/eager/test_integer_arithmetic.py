"""Integer arithmetic on npu is exact and never traps, as torch's CPU kernels are.

torch-mlir lowers integer negation and floor division through float (-(2^31 - 1) gave -2^31,
(2^53 + 1) // 1 gave 2^53, 5 // 0 a silent INT_MIN; decompositions/integer.py, division.py); an
integer division by zero raised SIGFPE on the stream worker and killed the process
(targets/sim/integer_division.py): it now fails the kernel, raised at the next synchronization as the
CPU raises ZeroDivisionError."""

from __future__ import annotations

import pytest
import torch

import torch_npu  # noqa: F401
from conftest import assert_no_fallback

_DTYPES = [torch.int8, torch.int16, torch.int32, torch.int64]


def _edges(dtype: torch.dtype) -> torch.Tensor:
    info = torch.iinfo(dtype)
    values = [info.max, info.min + 1, info.max - 1, 7, -7, 5, -5, 0, 1, -1]
    if dtype == torch.int64:
        values += [2**53 + 1, -(2**62) - 3, 9007199254740993]
    return torch.tensor(values, dtype=dtype)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_negation_and_floor_division_are_exact(dtype, eager_stats):
    a = _edges(dtype)
    b = torch.tensor([3, -2, 7, 2, 2, -4, 3, 5, -1, 1] + [1, 5, -3][: len(a) - 10], dtype=dtype)
    cases = {
        "neg": lambda a, b: -a,
        "floor_divide": lambda a, b: a // b,
        "floor_divide_number": lambda a, b: a // -3,
        "div_floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
        "div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc"),
        "remainder": lambda a, b: a % b,
        "fmod": lambda a, b: torch.fmod(a, b),
        "floor_divide_float": lambda a, b: a // 2.5,
    }
    for name, fn in cases.items():
        torch.testing.assert_close(fn(a.npu(), b.npu()).cpu(), fn(a, b), rtol=0, atol=0, msg=name)
    assert_no_fallback()


@pytest.mark.parametrize("dtype", _DTYPES)
def test_add_and_sub_with_alpha_wrap_as_on_cpu(dtype, eager_stats):
    # alpha reaches the kernel as a 0-d int64 parameter; torch-mlir crashed the compile worker on an
    # int8 tensor times it, so every int8 add / sub ran on the CPU.
    a = _edges(dtype)
    b = torch.flip(a, [0])
    for alpha in (1, 3, -2, 100):
        for fn in (torch.add, torch.sub):
            torch.testing.assert_close(fn(a.npu(), b.npu(), alpha=alpha).cpu(), fn(a, b, alpha=alpha),
                                       rtol=0, atol=0, msg=f"{fn.__name__} alpha={alpha}")
    assert_no_fallback()


@pytest.mark.parametrize("dtype", _DTYPES)
def test_numbers_shifts_and_powers_compute_as_on_cpu(dtype, eager_stats):
    # A number operand is cast to the tensor's dtype, wrapping (int8 % 300 is int8 % 44): torch-mlir
    # crashed the compile worker on int8 with a number, has no bitwise_or / xor with a number nor an
    # integer pow, and shifts by an amount outside [0, bits) are poison in arith (torch: 0 / the sign).
    a = _edges(dtype)
    amount = torch.tensor([1, 9, -2, 0, 63, 7, 8, 100, 3, 31] + [64, 2, 65][: len(a) - 10], dtype=dtype)
    cases = {
        "mod_number": lambda a, b: a % 300, "fmod_number": lambda a, b: torch.fmod(a, -3), "mul_number": lambda a, b: a * 300,
        "or_number": lambda a, b: a | 6, "xor_number": lambda a, b: a ^ 300, "and_number": lambda a, b: a & -3,
        "xor": lambda a, b: a ^ b, "shift_left": lambda a, b: a << b, "shift_right": lambda a, b: a >> b,
        "shift_left_number": lambda a, b: a << 70, "shift_right_number": lambda a, b: a >> 3,
        "shift_left_in_place": lambda a, b: a.clone().__ilshift__(b), "shift_right_in_place": lambda a, b: a.clone().__irshift__(5),
        "pow_0": lambda a, b: a ** 0, "pow_2": lambda a, b: a ** 2, "pow_7": lambda a, b: a ** 7,
    }
    for name, fn in cases.items():
        torch.testing.assert_close(fn(a.npu(), amount.npu()).cpu(), fn(a, amount), rtol=0, atol=0, msg=name)
    assert_no_fallback()


@pytest.mark.parametrize("op", ["floor_divide", "remainder", "fmod", "div_trunc"])
def test_division_by_zero_raises_at_sync_and_the_device_stays_usable(op):
    fn = {"floor_divide": lambda a, b: a // b, "remainder": lambda a, b: a % b, "fmod": torch.fmod,
          "div_trunc": lambda a, b: torch.div(a, b, rounding_mode="trunc")}[op]
    a, b = torch.tensor([7, -7, 5]), torch.tensor([2, 0, 3])
    with pytest.raises(RuntimeError, match=ZeroDivisionError.__name__):
        fn(a, b)
    fn(a.npu(), b.npu())
    with pytest.raises(RuntimeError, match=r"(?s)device-side assertion failed.*ERR\d{5}"):
        torch.npu.synchronize()
    b[1] = -3
    torch.testing.assert_close(fn(a.npu(), b.npu()).cpu(), fn(a, b), rtol=0, atol=0)
