"""A matmul operand stored in FRACTAL_NZ is read as stored: no unpacking kernel, AscendC copies its
fractals straight into L1, and the result matches torch (run through the CPU twin) and the sim."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_mlir import ir

from npu_mlir.dialects.ascend import load_ascend
from npu_mlir.frontend.references.formats import FRACTAL_NZ, to_logical, to_physical
from npu_mlir.frontend.torch_import import import_fx_graph
from npu_mlir.pipeline import PipelineOptions, run_pipeline
from test_cpu_twin_pipeline import pytestmark, run_through_ascendc  # noqa: F401  (skips without g++)

M, K, N = 40, 200, 20  # tails in every dim, two K tiles


def _kernels(fn, examples) -> list[ir.Operation]:
    with ir.Context() as ctx, ir.Location.unknown():
        load_ascend(ctx)
        module = ir.Module.parse(str(import_fx_graph(fn, examples).module))
        run_pipeline(module, PipelineOptions(from_torch=False, until="tile"))
        return [str(op) for op in module.body.operations if op.operation.name == "ascend.kernel"]


CASES = {
    # mm(x, w): B stored [k, n] in NZ.
    "mm": (lambda x, w: torch.ops.aten.mm(x, to_logical(w, FRACTAL_NZ, (K, N))), (K, N)),
    # F.linear(x, w): B stored [n, k] in NZ, read transposed.
    "linear": (lambda x, w: torch.nn.functional.linear(x, to_logical(w, FRACTAL_NZ, (N, K))), (N, K)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_nz_weight_read_as_stored(tmp_path, case):
    fn, logical_shape = CASES[case]
    torch.manual_seed(0)
    x = torch.randn(M, K).half()
    weight = torch.randn(logical_shape).half()
    stored = to_physical(weight, FRACTAL_NZ)
    kernels = _kernels(fn, [x, stored])
    assert len(kernels) == 1, kernels  # the cube kernel only: no transpose / slice kernel unpacks the weight
    assert f'tensor<{logical_shape[0]}x{logical_shape[1]}xf16, #ascend.format<"FRACTAL_NZ">>' in kernels[0]
    (got,), _ = run_through_ascendc(tmp_path, fn, [x, stored])
    want = fn(x.float(), stored.float()).numpy()
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=2e-2, atol=2e-2)
