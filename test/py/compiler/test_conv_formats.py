"""Conv's NC1HWC0 input, FRACTAL_Z weight and NC1HWC0 result stay inside the conv kernel: the kernel
reads and writes ND tensors in GM and converts them in its copy-in / copy-out, so formats add no
kernel; the one kernel matches torch through the sim and, as AscendC, on the CPU twin."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch_mlir import ir

from npu_mlir.dialects.ascend import load_ascend
from npu_mlir.frontend.torch_import import import_fx_graph
from npu_mlir.pipeline import PipelineOptions, run_pipeline
from npu_mlir.targets.sim.build import run_on_host
from npu_mlir.targets.sim.kernel import compile_ascend_kernel
from test_cpu_twin_pipeline import pytestmark, run_through_ascendc  # noqa: F401  (skips without g++)


def conv_relu(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.relu(F.conv2d(x, w, b, padding=1))


def test_conv_format_casts_run_in_the_conv_kernel(tmp_path):
    torch.manual_seed(0)
    x, w, b = torch.randn(2, 4, 8, 8), torch.randn(8, 4, 3, 3), torch.randn(8)
    want = conv_relu(x, w, b)
    with ir.Context() as ctx, ir.Location.unknown():
        load_ascend(ctx)
        module = ir.Module.parse(str(import_fx_graph(conv_relu, [x, w, b]).module))
        run_pipeline(module, PipelineOptions(from_torch=False, until="tile"))
        [kernel] = [op.operation for op in module.body.operations if op.operation.name == "ascend.kernel"]
        text = str(kernel)
        assert text.count('"ascend.format_cast"') == 3 and "ascend.conv2d" in text  # in, weight, result
        ftype = ir.FunctionType(ir.TypeAttr(kernel.attributes["function_type"]).value)
        assert all("#ascend.format" not in str(t) for t in list(ftype.inputs) + list(ftype.results)), ftype
        [got] = run_on_host(compile_ascend_kernel(kernel, cache_dir=tmp_path), [x, w, b])
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    (twin,), _ = run_through_ascendc(tmp_path, conv_relu, [x, w, b])
    np.testing.assert_allclose(twin.reshape(want.shape), want.numpy(), rtol=1e-4, atol=1e-4)
