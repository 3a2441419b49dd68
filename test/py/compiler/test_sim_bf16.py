"""bf16 kernels that only move data (pad, reshape, transpose: the NZ format conversion) compile on
the sim target and keep every bit; bf16 arithmetic next to them still computes in f32."""

from __future__ import annotations

import pytest
import torch

from npu_mlir.frontend import import_fx_graph
from npu_mlir.frontend.references.formats import FRACTAL_NZ, to_physical
from npu_mlir.targets.sim.build import SimTiling, compile_linalg, run_on_host

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def kernel_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_NPU_KERNEL_CACHE", str(tmp_path))


def run(fn, inputs: list[torch.Tensor], blocks: int = 2) -> list[torch.Tensor]:
    kernel = compile_linalg(import_fx_graph(fn, inputs).module, SimTiling(blocks), name="bf16")
    return run_on_host(kernel, inputs, threads=2)


def test_bf16_pad_then_transpose_keeps_every_bit():
    x = torch.randn(5, 40).to(torch.bfloat16)
    # NaN payloads, a signalling NaN, infinities, -0 and a subnormal: moved, never rounded through f32.
    x.view(torch.int16)[0, :6] = torch.tensor([0x7F81, 0x7FC1, -32767, 0x7F80, -32768, 0x0001], dtype=torch.int16)
    (got,) = run(lambda t: to_physical(t, FRACTAL_NZ), [x])
    want = to_physical(x, FRACTAL_NZ)
    assert got.shape == want.shape == (3, 1, 16, 16)
    assert torch.equal(got.view(torch.int16), want.view(torch.int16))


def test_bf16_arithmetic_feeding_a_pad_rounds_once_from_f32():
    a, b = torch.randn(5, 40).to(torch.bfloat16), torch.randn(5, 40).to(torch.bfloat16)
    fn = lambda p, q: to_physical(p * q + p, FRACTAL_NZ)
    (got,) = run(fn, [a, b])
    # The fused chain runs in f32 and is rounded to bf16 once, where torch rounds after each op.
    torch.testing.assert_close(got, fn(a.float(), b.float()).bfloat16(), rtol=0, atol=0)
    torch.testing.assert_close(got, fn(a, b), rtol=0.1, atol=0.05)
