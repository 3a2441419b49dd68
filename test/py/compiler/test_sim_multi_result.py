"""Kernels with several results split over blocks when the results share a parallel dim: every block
writes its slice of each result (one fused slice loop). Numbers are checked against CPU PyTorch."""

from __future__ import annotations

import pytest
import torch

from npu_mlir.frontend import import_fx_graph
from npu_mlir.frontend.references import fusion_attention
from npu_mlir.targets.sim.build import SimTiling, compile_linalg, run_on_host

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def kernel_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_NPU_KERNEL_CACHE", str(tmp_path))


def compile_and_check(fn, inputs: list[torch.Tensor], blocks: int = 8) -> int:
    kernel = compile_linalg(import_fx_graph(fn, inputs).module, SimTiling(blocks), name="multi")
    got = run_on_host(kernel, inputs, threads=2)
    want = fn(*inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)
    return kernel.block_dim


def test_two_results_of_different_rank_split_over_blocks():
    x = torch.randn(64, 96)
    assert compile_and_check(lambda a: (torch.relu(a) * 2, a.amax(-1)), [x]) == 8


def test_attention_forward_three_results_split_over_blocks():
    q, k, v = (torch.randn(1, 4, 32, 16) for _ in range(3))
    fn = lambda a, b, c: fusion_attention.forward(a, b, c, 4, "BNSD", None, None, None, 0.25, 1.0)
    assert compile_and_check(fn, [q, k, v], blocks=4) == 4


def test_a_result_computed_from_another_splits_over_blocks():
    # The second result's slice loop recomputes its slice of the first; CSE merges the two once fused.
    x = torch.randn(32, 48)
    assert compile_and_check(lambda a: (a * 3, (a * 3).sum(-1)), [x]) == 8
    # an elementwise chain of results, as an optimizer step's moments and the update that reads them
    y, g = torch.randn(32, 48), torch.randn(32, 48)
    assert compile_and_check(lambda p, d: (m := p * 0.9 + d * 0.1, p - 0.01 * m / (m * m + 1e-8).sqrt()), [y, g]) == 8


def test_results_without_a_common_dim_run_on_one_block():
    x = torch.randn(32, 48)
    assert compile_and_check(lambda a: (a.sum(0), a.sum(1)), [x]) == 1
