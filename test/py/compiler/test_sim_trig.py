"""sin and cos on the simulated-device target: the polynomial expansion (ascend-approximate-math) vs torch."""

from __future__ import annotations

import pytest
import torch

from npu_mlir.frontend import import_fx_graph
from npu_mlir.targets.sim.build import SimTiling, compile_linalg, run_on_host

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def kernel_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_NPU_KERNEL_CACHE", str(tmp_path))


def run(fn, x):
    kernel = compile_linalg(import_fx_graph(fn, [x]).module, SimTiling(4), name="trig")
    with open(kernel.so_path, "rb") as so:
        imports = so.read()
    assert b"sinf" not in imports and b"cosf" not in imports  # no per-element libm call
    return run_on_host(kernel, [x], threads=2)[0]


@pytest.mark.parametrize("fn", [torch.sin, torch.cos], ids=["sin", "cos"])
def test_sin_cos_match_torch_over_the_reduction_range(fn):
    # Quadrant boundaries, Box-Muller's [0, 2 pi), and large arguments up to Cephes' 8192 limit.
    x = torch.cat([torch.linspace(-7, 7, 4001), torch.rand(4000) * 2 * torch.pi,
                   torch.linspace(-8000, 8000, 4001), torch.arange(-8, 9) * torch.pi / 4])
    got = run(fn, x)
    torch.testing.assert_close(got, fn(x.double()).float(), rtol=0, atol=3e-7)


def test_sin_cos_special_values_and_half():
    x = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e-30, -1e-30, 3.0])
    s = run(torch.sin, x)
    torch.testing.assert_close(s, torch.sin(x), equal_nan=True)
    assert torch.equal(s[:2].signbit(), torch.tensor([False, True]))  # sin(-0) = -0
    torch.testing.assert_close(run(torch.cos, x), torch.cos(x), equal_nan=True)
    h = torch.linspace(-10, 10, 512, dtype=torch.float16)
    torch.testing.assert_close(run(torch.sin, h), torch.sin(h), rtol=1e-3, atol=1e-3)
