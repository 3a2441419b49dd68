"""Random ops inside npu-mlir graphs draw from the npu Philox generator as eager npu ops do: the same seed
gives the same numbers as eager, the generator's offset advances as eager's does, and nothing splits."""

import copy

import torch

import torch_npu  # noqa: F401


def test_dropout_model_trains_as_eager_by_seed(compile_stats):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Dropout(0.3), torch.nn.ReLU(),
                                torch.nn.Linear(32, 4), torch.nn.Dropout(0.5)).npu()
    reference = copy.deepcopy(model)
    compiled = torch.compile(model, backend="npu-mlir")
    opts = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (model, reference)]
    for step in range(3):
        x = torch.randn(8, 16).npu()
        outs, states = [], []
        for run, opt in zip((compiled, reference), opts):
            torch.npu.manual_seed(100 + step)
            opt.zero_grad()
            out = run(x)
            out.square().mean().backward()
            opt.step()
            outs.append(out.detach().cpu())
            states.append(torch.npu.get_rng_state())
        torch.testing.assert_close(outs[0], outs[1], rtol=1e-5, atol=1e-6)
        assert torch.equal(states[0], states[1])  # the offset advanced as eager's did
        for p, q in zip(model.parameters(), reference.parameters()):
            torch.testing.assert_close(p.detach().cpu(), q.detach().cpu(), rtol=1e-5, atol=1e-6)
    torch.npu.manual_seed(7)
    first = compiled(x)
    torch.npu.manual_seed(7)
    torch.testing.assert_close(compiled(x), first, rtol=0, atol=0)
    assert not torch.equal(compiled(x).cpu(), first.cpu())  # the next call draws new numbers
    stats = compile_stats()
    assert stats["split_nodes"] == {} and stats["forward_graphs"] == 1, stats


def _draws(x: torch.Tensor):
    u = torch.rand(5, 7, device=x.device)
    n = torch.randn_like(x)
    b = torch.bernoulli(torch.sigmoid(x)) + x.bernoulli(0.25)
    e = torch.empty_like(x).uniform_(-1.0, 2.0) + torch.empty_like(x).normal_(1.0, 3.0)
    return u * 2, n + x, b, e, torch.rand(3, dtype=torch.float16, device=x.device)


def test_random_ops_draw_the_eager_numbers(compile_stats):
    x = torch.randn(6, 10).npu()
    compiled = torch.compile(_draws, backend="npu-mlir")
    with torch.no_grad():
        torch.npu.manual_seed(3)
        got, got_state = compiled(x), torch.npu.get_rng_state()
        torch.npu.manual_seed(3)
        expected, expected_state = _draws(x), torch.npu.get_rng_state()
    for g, e in zip(got, expected):
        torch.testing.assert_close(g.cpu(), e.cpu(), rtol=1e-5, atol=1e-5)
    assert torch.equal(got_state, expected_state)
    stats = compile_stats()
    assert stats["split_nodes"] == {} and stats["graphs_compiled"] == 1, stats


def _split_draws(x: torch.Tensor, y: torch.Tensor):
    a = torch.nn.functional.dropout(x, 0.5)
    e = (x * 1).exponential_()  # an op rng.py lacks: an eager npu node drawing from the same generator
    b = torch.nn.functional.dropout(y, 0.5)
    return a, e, b


def test_pieces_draw_in_eager_order_around_a_split(compile_stats):
    # The two dropouts could share one piece (they do not depend on the eager node): its draws then come
    # before or after the eager node's, not around them, so the pieces are split and run in draw order.
    x, y = torch.randn(64).npu(), torch.randn(64).npu()
    compiled = torch.compile(_split_draws, backend="npu-mlir")
    with torch.no_grad():
        torch.npu.manual_seed(5)
        got, got_state = compiled(x, y), torch.npu.get_rng_state()
        torch.npu.manual_seed(5)
        expected, expected_state = _split_draws(x, y), torch.npu.get_rng_state()
    for g, e in zip(got, expected):
        torch.testing.assert_close(g.cpu(), e.cpu(), rtol=0, atol=0)
    assert torch.equal(got_state, expected_state)
    stats = compile_stats()
    assert list(stats["split_nodes"]) == ["aten.exponential.default"] and stats["graphs_compiled"] == 2, stats
