"""fmod and floor division on npu give torch's CPU answers bit for bit (frontend/decompositions/
division.py): torch-mlir's lowerings rounded the quotient first (fmod(1.0, 0.1) was 0,
floor_divide(1.0, 0.1) was 10, floor_divide(inf, 2) was inf)."""

from __future__ import annotations

import pytest
import torch

import torch_npu  # noqa: F401
from conftest import assert_no_fallback

_A = [1.0, 5.0, -1.0, 7.0, float("inf"), 3.0, -0.0, 0.3, -1.0, 5.0, float("nan"), 1e30]
_B = [0.1, 0.5, 0.1, -0.7, 2.0, 0.0, 2.0, -0.1, 0.5, float("inf"), 1.0, 3.3]
_CASES = {
    "floor_divide": lambda a, b: torch.floor_divide(a, b),
    "floordiv_number": lambda a, b: a // 0.3,
    "div_floor": lambda a, b: torch.div(a, b, rounding_mode="floor"),
    "div_floor_number": lambda a, b: torch.div(a, 0.1, rounding_mode="floor"),
    "fmod": lambda a, b: torch.fmod(a, b),
    "fmod_number": lambda a, b: torch.fmod(a, -0.7),
    "remainder": lambda a, b: torch.remainder(a, b),
    "remainder_number": lambda a, b: a % 0.3,
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("name", sorted(_CASES))
def test_division_matches_cpu_bit_for_bit(name, dtype, eager_stats):
    a, b = torch.tensor(_A, dtype=dtype), torch.tensor(_B, dtype=dtype)
    expected = _CASES[name](a, b)
    actual = _CASES[name](a.npu(), b.npu()).cpu()
    torch.testing.assert_close(actual, expected, equal_nan=True, rtol=0, atol=0)
    numbers = ~expected.isnan()
    assert torch.equal(actual.signbit()[numbers], expected.signbit()[numbers]), "signed zeros differ"
    assert_no_fallback()


def test_integer_floor_division_keeps_its_exact_lowering(eager_stats):
    a, b = torch.tensor([-7, 7, 5, -9]), torch.tensor([2, -2, 3, -4])
    torch.testing.assert_close((a.npu() // b.npu()).cpu(), a // b)
    torch.testing.assert_close(torch.remainder(a.npu(), b.npu()).cpu(), torch.remainder(a, b))
