"""A row reduction too long for UB (ascend-tile splits the row across column tiles) as vector
AscendC: each tile reduced, the row's accumulator folding the partial results, run on the CPU
twin against torch and the sim."""

from __future__ import annotations

import numpy as np
import torch

from npu_mlir.frontend.torch_import import import_fx_graph
from npu_mlir.targets.sim import build as sim
from test_cpu_twin_pipeline import pytestmark, run_through_ascendc  # noqa: F401  (skips without g++)


def row_reductions(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor):
    # A sum with an elementwise prologue, a max, a mean: 70000 / 50000 columns do not fit in UB.
    return (x * 2.0 + 1.0).sum(1), y.amax(1), z.mean(1)


def test_split_row_reductions_run_as_vector_ascendc(tmp_path):
    torch.manual_seed(0)
    examples = [torch.randn(3, 70000), torch.randn(2, 50000), torch.randn(5, 40001)]
    got, kernels = run_through_ascendc(tmp_path, row_reductions, examples)
    assert kernels.count("col_tiles") == 3, "every row must be split across UB tiles"
    source = (tmp_path / "kernel.cpp").read_text()
    assert source.count("A row split across") == 3 and "Runs on the scalar unit" not in source
    want = row_reductions(*examples)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-4, atol=1e-3)
    kernel = sim.compile_linalg(import_fx_graph(row_reductions, examples).module)
    for g, s in zip(got, sim.run_on_host(kernel, examples), strict=True):
        np.testing.assert_allclose(g, s.numpy(), rtol=1e-4, atol=1e-3)
