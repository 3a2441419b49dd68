"""The sim target on the Ascend pipeline's own kernels: fused, tiled `ascend.kernel`s run in launch order.

Each graph goes torch -> linalg -> attach-target / raise / (formats) / fuse / tile; then every
ascend.kernel is compiled by the sim target and @main's launches are replayed on the host, passing
storage-shaped tensors (FRACTAL_NZ included) from kernel to kernel, and compared with torch.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch_mlir import ir

from npu_mlir.dialects.ascend import load_ascend
from npu_mlir.frontend import import_fx_graph
from npu_mlir.pipeline import PipelineOptions, run_pipeline
from npu_mlir.targets.sim.build import run_on_host
from npu_mlir.targets.sim.kernel import compile_ascend_kernel, kernel_ops

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(autouse=True)
def kernel_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_NPU_KERNEL_CACHE", str(tmp_path))


def run_through_kernels(fn, inputs, formats: bool):
    """Returns (outputs, {kernel name: block_dim}) of the replayed launch sequence."""
    return run_linalg_through_kernels(str(import_fx_graph(fn, inputs).module), inputs, formats)


def run_linalg_through_kernels(text: str, inputs, formats: bool = False):
    """run_through_kernels of a linalg-on-tensors module's text."""
    with ir.Context(), ir.Location.unknown():
        load_ascend()
        module = ir.Module.parse(text)
        run_pipeline(module, PipelineOptions(from_torch=False, formats=formats, until="tile"))
        kernels = {name: compile_ascend_kernel(op) for name, op in kernel_ops(module).items()}
        main = next(op.operation for op in module.body.operations if op.operation.name == "func.func")
        values = list(zip(main.regions[0].blocks[0].arguments, inputs))

        def lookup(v):
            return next(t for known, t in values if known == v)

        outputs = None
        for op in main.regions[0].blocks[0].operations:
            if op.name == "ascend.launch":
                kernel = kernels[ir.FlatSymbolRefAttr(op.attributes["callee"]).value]
                results = run_on_host(kernel, [lookup(v) for v in op.operands], threads=2)
                values.extend(zip(op.results, results))
            elif op.name == "func.return":
                outputs = [lookup(v) for v in op.operands]
            else:
                pytest.fail(f"host op {op.name} outside kernels; the replay only runs launches")
    return outputs, {name: k.block_dim for name, k in kernels.items()}


@pytest.mark.parametrize("formats", [False, True])
def test_matmul_bias_gelu_kernel(formats):
    a, w, b = torch.randn(64, 96), torch.randn(96, 128), torch.randn(128)
    fn = lambda a, w, b: F.gelu(a @ w + b)
    (out,), blocks = run_through_kernels(fn, [a, w, b], formats)
    torch.testing.assert_close(out, fn(a, w, b), rtol=1e-4, atol=1e-4)
    assert any("matmul" in name for name in blocks)


@pytest.mark.parametrize("formats", [False, True])
def test_unaligned_matmul_through_fractal_nz(formats):
    a, w = torch.randn(37, 29), torch.randn(29, 53)
    (out,), _ = run_through_kernels(lambda a, w: torch.relu(a @ w), [a, w], formats)
    torch.testing.assert_close(out, torch.relu(a @ w), rtol=1e-4, atol=1e-4)


def test_softmax_and_layer_norm_kernels():
    x = torch.randn(32, 128)
    fn = lambda x: F.layer_norm(torch.softmax(x, -1) * 4, (128,))
    (out,), _ = run_through_kernels(fn, [x], formats=False)
    torch.testing.assert_close(out, fn(x), rtol=1e-4, atol=1e-4)


def test_elementwise_chain_kernel_is_split():
    x, y = torch.randn(256, 64), torch.randn(256, 64)
    fn = lambda x, y: torch.sigmoid(x) * y - torch.tanh(y)
    (out,), blocks = run_through_kernels(fn, [x, y], formats=False)
    torch.testing.assert_close(out, fn(x, y), rtol=1e-5, atol=1e-5)
    assert max(blocks.values()) > 1


def test_conv2d_kernel():
    x, w = torch.randn(2, 3, 12, 12), torch.randn(8, 3, 3, 3)
    fn = lambda x, w: torch.relu(F.conv2d(x, w, padding=1))
    (out,), _ = run_through_kernels(fn, [x, w], formats=False)
    torch.testing.assert_close(out, fn(x, w), rtol=1e-4, atol=1e-4)


def test_host_compute_runs_in_opaque_kernels():
    # Upstream ops raising leaves alone (value+index reduction, gather, concat) become opaque
    # kernels that feed and read the vector kernels around them; nothing runs on the host.
    x, y = torch.randn(16, 32), torch.randn(3, 32)
    index = torch.randint(0, 32, (16, 5))

    def fn(x, y, index):
        values, indices = torch.max(torch.exp(x), 1)
        picked = torch.gather(x * 2, 1, index)
        return values + 1, indices, torch.tanh(picked), torch.cat([x, y]).sigmoid()

    outs, blocks = run_through_kernels(fn, [x, y, index], formats=False)
    for got, want in zip(outs, fn(x, y, index)):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    assert sum("opaque" in name for name in blocks) >= 3 and sum("elementwise" in name for name in blocks) >= 2


CONSTANT_TABLE = """
func.func @main(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %c = arith.constant dense<[1.0, -2.0, 3.0, 0.5]> : tensor<4xf32>
  %e = tensor.empty() : tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>,
                                        affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %c : tensor<8x4xf32>, tensor<4xf32>) outs(%e : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
"""


def test_constant_table_read_by_a_vector_kernel():
    # A non-splat constant (a table torch-mlir folded) that an elementwise kernel reads is written
    # by a copy kernel first: the host function holds no constant a launch would read.
    x = torch.randn(8, 4)
    (out,), blocks = run_linalg_through_kernels(CONSTANT_TABLE, [x])
    torch.testing.assert_close(out, x * torch.tensor([1.0, -2.0, 3.0, 0.5]))
    assert sorted(n.split("_")[1] for n in blocks) == ["elementwise", "opaque"]
