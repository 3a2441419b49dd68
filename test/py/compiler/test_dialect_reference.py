"""Raising, format assignment and fusion keep the program's meaning: torch graphs go through
the Ascend pipeline up to outlined kernels and are run by a numpy reference of the ascend ops
(ascend_reference.py), against CPU PyTorch."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from ascend_reference import run_main
from torch_mlir import ir

from npu_mlir.dialects.ascend import load_ascend
from npu_mlir.frontend import import_fx_graph
from npu_mlir.pipeline import PipelineOptions, run_pipeline

pytestmark = pytest.mark.timeout(120)
g = torch.Generator().manual_seed(0)


def r(*shape, dtype=torch.float32):
    return torch.randn(*shape, generator=g).to(dtype)


CASES = {
    "add_relu": (lambda a, b: torch.relu(a + b), [r(4, 8), r(4, 8)], None),
    "scalar_chain": (lambda a: torch.exp(a * 0.5) - 1.0, [r(4, 8)], 1),
    "broadcast_add": (lambda a, b: a * b + b, [r(4, 8), r(8)], 1),
    "sum": (lambda a: a.sum(dim=1), [r(4, 8)], 1),
    "mean_keepdim": (lambda a: a.mean(dim=-1, keepdim=True), [r(4, 8)], 1),
    "amax_dim0": (lambda a: a.amax(dim=0), [r(5, 8)], 1),
    "softmax": (lambda a: torch.softmax(a, -1), [r(6, 10)], 1),
    "layer_norm": (lambda a, w, b: F.layer_norm(a, (16,), w, b), [r(4, 16), r(16), r(16)], 1),
    "linear_gelu": (lambda x, w, b: F.gelu(F.linear(x, w, b)), [r(4, 8), r(3, 8), r(3)], 1),
    "bmm": (lambda a, b: torch.bmm(a, b), [r(2, 4, 8), r(2, 8, 3)], 1),
    "conv_bias_relu": (lambda x, w, b: torch.relu(F.conv2d(x, w, b, padding=1)), [r(1, 3, 8, 8), r(4, 3, 3, 3), r(4)], None),
    "transpose_add": (lambda a: a.t().contiguous() + 1.0, [r(4, 8)], None),
    "where": (lambda a, b: torch.where(a > b, a, b * 2), [r(4, 8), r(4, 8)], 1),
    "clamp_sigmoid": (lambda a: torch.sigmoid(a).clamp(0.2, 0.7), [r(4, 8)], 1),
    "to_half": (lambda a: (a * 3).to(torch.float16), [r(4, 8)], 1),
}


def compile_and_run(fn, inputs, formats: bool):
    text = str(import_fx_graph(fn, inputs).module)
    with ir.Context(), ir.Location.unknown():
        load_ascend()
        module = ir.Module.parse(text)
        run_pipeline(module, PipelineOptions(from_torch=False, formats=formats, until="kernels"))
        kernels = sum(op.operation.name == "ascend.kernel" for op in module.body.operations)
        return run_main(module, [t.numpy() for t in inputs]), kernels


@pytest.mark.parametrize("formats", [False, True], ids=["nd", "formats"])
@pytest.mark.parametrize("name", CASES)
def test_pipeline_keeps_meaning(name, formats):
    fn, inputs, kernels = CASES[name]
    want = fn(*inputs)
    (got,), n_kernels = compile_and_run(fn, inputs, formats)
    assert got.shape == tuple(want.shape)
    tol = 1e-2 if want.dtype == torch.float16 else 1e-5
    np.testing.assert_allclose(got.astype(np.float64), want.double().numpy(), rtol=tol, atol=tol)
    if kernels is not None and not formats:
        assert n_kernels == kernels


def test_runtime_scalar_stays_a_kernel_argument():
    """A scalar that is a graph input (torch_npu passes `lr` this way) is not folded."""
    fn = lambda a, s: a * s + 1.0
    inputs = [r(4, 8), torch.tensor(0.25, dtype=torch.float64)]
    text = str(import_fx_graph(fn, inputs).module)
    with ir.Context(), ir.Location.unknown():
        load_ascend()
        module = ir.Module.parse(text)
        run_pipeline(module, PipelineOptions(from_torch=False, until="kernels"))
        kernel = next(op for op in module.body.operations if op.operation.name == "ascend.kernel")
        assert len(kernel.regions[0].blocks[0].arguments) == 2
        for s in (0.25, -3.0):
            (got,) = run_main(module, [inputs[0].numpy(), np.array(s)])
            np.testing.assert_allclose(got, (inputs[0] * s + 1.0).numpy(), rtol=1e-6, atol=1e-6)
