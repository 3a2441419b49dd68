"""Dynamic shapes under npu-mlir: a graph that acts on each row of its dynamic size compiles once and
runs a second and third size without compiling (chunk by chunk, dynamo/dynamic.py); a graph that
reduces over the size compiles per shape, the reason in compile_stats()["per_shape"]."""

import pytest
import torch

import torch_npu  # noqa: F401
from torch_npu.dynamo.stats import reset_compile_stats

TOL = dict(rtol=1e-4, atol=1e-5)


@pytest.fixture
def compile_stats():
    torch._dynamo.reset()
    reset_compile_stats()
    yield torch.npu.compile_stats
    torch._dynamo.reset()


def _run(fn, sizes, make, mark_dim=0, dynamic=None):
    compiled = torch.compile(fn, backend="npu-mlir", dynamic=dynamic)
    for size in sizes:
        args = make(size)
        npu = [a.npu() for a in args]
        if dynamic is None:
            torch._dynamo.mark_dynamic(npu[0], mark_dim)
        torch.testing.assert_close(compiled(*npu).cpu(), fn(*args), **TOL)


def _rows(x, w, b):
    # elementwise, a reduction and a softmax over the static dim, a matmul over rows of the size
    h = torch.relu(x @ w + b)
    return torch.softmax(h * 2.0 - 1.0, dim=-1) + h.sum(-1, keepdim=True) * 0.1


def test_rows_compile_once(compile_stats):
    torch.manual_seed(0)
    w, b = torch.randn(16, 24), torch.randn(24)
    wn, bn = w.npu(), b.npu()
    _run(lambda x: _rows(x, wn if x.is_npu else w, bn if x.is_npu else b), (8, 13, 40), lambda n: [torch.randn(n, 16)])
    stats = compile_stats()
    assert stats["shape_generic_graphs"] == 1 and stats["graphs_compiled"] == 1, stats
    assert stats["recompiles"] == 0 and stats["per_shape"] == {}, stats


def test_batched_matmul_over_sequence_compiles_once(compile_stats):
    # [s, heads, d] through a view to [s * heads, d], a matmul and back; dynamic=True
    torch.manual_seed(0)
    w = torch.randn(8, 8)
    wn = w.npu()

    def fn(x):
        y = (x.reshape(-1, 8) @ (wn if x.is_npu else w)).view(x.shape[0], 3, 8)
        return torch.nn.functional.layer_norm(y, (8,)) * torch.sigmoid(y)

    _run(fn, (6, 9, 17), lambda n: [torch.randn(n, 3, 8)], dynamic=True)
    stats = compile_stats()
    assert stats["shape_generic_graphs"] == 1 and stats["graphs_compiled"] == 1, stats
    assert stats["recompiles"] == 0, stats


def test_reduction_over_the_size_compiles_per_shape(compile_stats):
    torch.manual_seed(0)
    _run(lambda x: (x * x).sum(0), (8, 13, 40), lambda n: [torch.randn(n, 16)])
    stats = compile_stats()
    assert stats["shape_generic_graphs"] == 0 and stats["graphs_compiled"] == 3 and stats["recompiles"] == 2, stats
    assert list(stats["per_shape"]) == ["aten.sum.dim_IntList reduces or indexes along the dynamic size"], stats
