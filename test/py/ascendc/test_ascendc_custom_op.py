"""An AscendC kernel registered as a torch custom op on npu tensors (npu_ascendc.register_custom_op)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

import torch_npu  # noqa: F401  (the npu device)
from npu_mlir.tools import npu_ascendc

PROGRAMS = Path(__file__).parent / "programs"
pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ to build against the CPU twin")


@pytest.fixture(scope="module")
def leaky_add():
    def reference(x, y):
        return torch.nn.functional.leaky_relu(x + y, 0.1)

    try:
        return npu_ascendc.register_custom_op("ascendc_test::leaky_add", "(Tensor x, Tensor y) -> Tensor",
                                              [PROGRAMS / "leaky_add.cpp"], "leaky_add", 8,
                                              lambda x, y: [torch.empty_like(x)], reference=reference)
    except npu_ascendc.BuildError as exc:
        if "not built" in str(exc):
            pytest.skip(str(exc))
        raise


def test_custom_op_matches_torch_on_npu(leaky_add):
    x, y = torch.randn(2, 8 * 2048)
    xn, yn = x.npu(), y.npu()
    z = leaky_add(xn, yn)
    assert z.device.type == "npu" and z.shape == x.shape
    torch.testing.assert_close(z.cpu(), torch.nn.functional.leaky_relu(x + y, 0.1))
    torch.testing.assert_close(xn.cpu(), x)  # inputs untouched
    torch.testing.assert_close(leaky_add(x, y), torch.nn.functional.leaky_relu(x + y, 0.1))  # CPU reference


def test_custom_op_fake_tensor_shape(leaky_add):
    x = torch.empty(8 * 2048, device="meta")
    assert leaky_add(x, x).shape == x.shape
