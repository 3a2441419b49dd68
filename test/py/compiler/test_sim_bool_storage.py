"""A bool tensor kept in memory inside a kernel reads back as written (sim-bool-storage).

LLVM packs a vector of i1 into bits when it stores it, while scalar accesses to the same buffer
address a byte per element; a mask written by one loop and read by a differently vectorized one
came back wrong, silently. The cases keep a boolean input in two shapes (as index_put's mask is,
flattened for its running count and whole for the select), which bufferizes it into an i1 buffer.
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


def running_count_then_select(mask: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Where the mask holds, x; elsewhere the number of True elements up to that row."""
    flat = mask.reshape(-1)
    position = torch.arange(flat.shape[0])
    upto = position[:, None] <= position[None, :]
    count = torch.where(upto, flat[:, None].long(), 0).sum(0)
    return torch.where(mask, x, count[:, None].float())


@pytest.mark.parametrize("rows, blocks", [(9, 1), (37, 2)])
def test_a_mask_read_in_two_shapes_keeps_every_element(rows, blocks):
    torch.manual_seed(3)
    mask, x = torch.rand(rows, 1) > 0.5, torch.randn(rows, 4)
    kernel = compile_linalg(import_fx_graph(running_count_then_select, [mask, x]).module, SimTiling(blocks),
                            name="bool_storage")
    (got,) = run_on_host(kernel, [mask, x], threads=blocks)
    torch.testing.assert_close(got, running_count_then_select(mask, x), rtol=0, atol=0)
