"""Inserts the linalg vectorizer wrote wrongly build right (sim-insert-windows).

A stride-2 insert came back packed (the backward of x[..., ::2]), a column came back along a row
(the backward of cat([x, x[..., :1]], -1)); both silently. Each case runs the sim kernel built from
torch-mlir's linalg against torch.
"""

from __future__ import annotations

import pytest
import torch

from npu_mlir.frontend import import_fx_graph
from npu_mlir.targets.sim.build import SimTiling, compile_linalg, run_on_host

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def kernel_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_NPU_KERNEL_CACHE", str(tmp_path))


CASES = {
    "step_2": (lambda d, x: torch.slice_scatter(d, x, 1, 0, 7, 2), (4, 4)),
    "step_3_from_1": (lambda d, x: torch.slice_scatter(d, x, 1, 1, 7, 3), (4, 2)),
    "step_2_rows": (lambda d, x: torch.slice_scatter(d, x, 0, 0, 4, 2), (2, 7)),
    "first_column": (lambda d, x: torch.slice_scatter(d, x, 1, 0, 1), (4, 1)),
    "last_column": (lambda d, x: torch.slice_scatter(d, x, 1, 6, 7), (4, 1)),
    "column_into_zeros": (lambda d, x: torch.slice_scatter(torch.zeros_like(d), x * 2, 1, 3, 4), (4, 1)),
}


@pytest.mark.parametrize("blocks", [1, 8])
@pytest.mark.parametrize("name", list(CASES))
def test_insert_matches_torch(name, blocks):
    fn, source = CASES[name]
    torch.manual_seed(0)
    inputs = [torch.randn(4, 7), torch.randn(source)]
    kernel = compile_linalg(import_fx_graph(fn, inputs).module, SimTiling(blocks), name=f"insert_{name}")
    (got,) = run_on_host(kernel, inputs, threads=2)
    torch.testing.assert_close(got, fn(*inputs), rtol=0, atol=0)
