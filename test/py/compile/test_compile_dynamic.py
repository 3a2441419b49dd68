"""Dynamic shapes under npu-mlir: a graph that acts on each row of its dynamic size, or sums over it,
compiles once and runs a second and third size without compiling (chunk by chunk, dynamo/dynamic.py);
a graph that reads a sum before it is complete compiles per shape, the reason in
compile_stats()["per_shape"]."""

import pytest
import torch

import torch_npu  # noqa: F401

TOL = dict(rtol=1e-4, atol=1e-5)
HALF_TOL = dict(rtol=2e-2, atol=5e-2)


def _run(fn, sizes, make, mark_dim=0, dynamic=None):
    compiled = torch.compile(fn, backend="npu-mlir", dynamic=dynamic)
    for size in sizes:
        args = make(size)
        npu = [a.npu() for a in args]
        if dynamic is None:
            torch._dynamo.mark_dynamic(npu[0], mark_dim)
        out, expected = compiled(*npu).cpu(), fn(*args)
        torch.testing.assert_close(out, expected, **(TOL if expected.dtype == torch.float32 else HALF_TOL))


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


class _Block(torch.nn.Module):
    def __init__(self, d=32, heads=4):
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.attn = torch.nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 2 * d), torch.nn.GELU(), torch.nn.Linear(2 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


def test_gpt_block_over_batches_compiles_once(compile_stats):
    # Attention runs sequence-first inside (the batch merged into dims before it: [8, s * 4, 8]),
    # bmm over batch x heads, softmax and layer norm over static dims; dynamic=True.
    torch.manual_seed(0)
    block = _Block().eval()
    npu_block = _Block().eval().npu()
    npu_block.load_state_dict(block.state_dict())
    with torch.no_grad():
        _run(lambda x: (npu_block if x.is_npu else block)(x), (3, 5, 8), lambda n: [torch.randn(n, 8, 32)],
             dynamic=True)
    stats = compile_stats()
    assert stats["shape_generic_graphs"] == 1 and stats["graphs_compiled"] == 1, stats
    assert stats["recompiles"] == 0, stats


@pytest.mark.parametrize("fn", [lambda x: (x * x).sum(0), lambda x: x * x / x.shape[0], lambda x: (x * x).mean()],
                         ids=["sum", "size", "mean"])
def test_sums_over_the_size_compile_once(compile_stats, fn):
    # each chunk adds its rows' part into an accumulator (the last chunk, overlapping, masks its first
    # rows); the size is a parameter the call sets
    torch.manual_seed(0)
    _run(fn, (8, 13, 20), lambda n: [torch.randn(n, 16)])
    stats = compile_stats()
    assert stats["shape_generic_graphs"] == 1 and stats["graphs_compiled"] == 1 and stats["recompiles"] == 0, stats


class _MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))

    def forward(self, x, y):
        return torch.nn.functional.mse_loss(self.net(x), y)


def test_training_over_batches_compiles_once(compile_stats):
    # the loss mean and the weight / bias gradients sum over the batch: forward and backward compile
    # once each for batches 3 / 5 / 8 and train as eager npu does
    torch.manual_seed(0)
    model = _MLP().npu()
    eager = _MLP().npu()
    eager.load_state_dict(model.state_dict())
    compiled = torch.compile(model, backend="npu-mlir", dynamic=True)
    opts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (model, eager)]
    for n in (3, 5, 8, 5):
        x, y = torch.randn(n, 16).npu(), torch.randn(n, 4).npu()
        losses = [compiled(x, y), eager(x, y)]
        for loss, opt in zip(losses, opts):
            loss.backward()
        torch.testing.assert_close(losses[0].cpu(), losses[1].cpu(), **TOL)
        for p, q in zip(model.parameters(), eager.parameters()):
            torch.testing.assert_close(p.grad.cpu(), q.grad.cpu(), **TOL)
        for opt in opts:
            opt.step()
            opt.zero_grad()
    for p, q in zip(model.parameters(), eager.parameters()):
        torch.testing.assert_close(p.cpu(), q.cpu(), **TOL)
    stats = compile_stats()
    assert stats["forward_graphs"] == 1 and stats["backward_graphs"] == 1, stats
    assert stats["shape_generic_graphs"] == 2 and stats["graphs_compiled"] == 2 and stats["recompiles"] == 0, stats


@pytest.mark.parametrize("fn, reason", [
    (lambda x: x - x.mean(0), "aten.sub.Tensor reads a sum over the dynamic size before every chunk has added to it"),
    (lambda x: x.cumsum(0), "aten.cumsum.default reduces or indexes along the dynamic size"),
    (lambda x: x.bfloat16().sum(0), "aten.sum.dim_IntList sums over the dynamic size in torch.bfloat16")],
    ids=["centre", "cumsum", "bf16-sum"])
def test_graphs_over_the_size_compile_per_shape(compile_stats, fn, reason):
    torch.manual_seed(0)
    _run(fn, (8, 13), lambda n: [torch.randn(n, 16)])
    stats = compile_stats()
    assert stats["shape_generic_graphs"] == 0 and stats["graphs_compiled"] == 2 and stats["recompiles"] == 1, stats
    assert list(stats["per_shape"]) == [reason], stats
