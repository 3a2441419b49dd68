"""torch.compile(backend="npugraphs"): each AOT graph compiled by npu-mlir, its executable run on the first
call, captured on the second, replayed later; training matches eager npu step for step (dropout drawn
in the graph, fresh numbers per replay), inference too."""

import copy

import torch

import torch_npu  # noqa: F401
from torch_npu.dynamo.stats import reset_compile_stats


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Dropout(0.1), torch.nn.Linear(32, 4)
    ).npu()


def _count_replays(monkeypatch):
    counter = {"replays": 0}
    replay = torch.npu.NPUGraph.replay

    def counting(self):
        counter["replays"] += 1
        replay(self)

    monkeypatch.setattr(torch.npu.NPUGraph, "replay", counting)
    return counter


def test_npugraphs_trains_as_eager(monkeypatch):
    counter = _count_replays(monkeypatch)
    torch._dynamo.reset()
    reset_compile_stats()
    model = _mlp()
    control = copy.deepcopy(model)
    compiled = torch.compile(model, backend="npugraphs")
    xs = [torch.randn(8, 16, device="npu") for _ in range(5)]
    losses = {}
    for name, m, params in (("graphed", compiled, model.parameters()), ("control", control, control.parameters())):
        opt = torch.optim.SGD(params, lr=0.1)
        torch.npu.manual_seed(3)
        losses[name] = []
        for x in xs:
            opt.zero_grad()
            loss = m(x).pow(2).mean()
            loss.backward()
            opt.step()
            losses[name].append(loss.detach().cpu())
    torch.testing.assert_close(torch.stack(losses["graphed"]), torch.stack(losses["control"]))
    for p, q in zip(model.parameters(), control.parameters()):
        torch.testing.assert_close(p.cpu(), q.cpu())
    # Steps 1 and 2 run the executables and capture them; steps 3-5 replay forward and backward.
    assert counter["replays"] >= 2 * 3
    stats = torch.npu.compile_stats()
    assert stats["graphs_compiled"] >= 2 and stats["graphs_captured"] == 2 and stats["split_nodes"] == {}, stats


def test_npugraphs_inference_replays_and_copies_outputs_out():
    torch._dynamo.reset()
    model = _mlp().eval()
    compiled = torch.compile(model, backend="npugraphs")
    with torch.no_grad():
        outs = [compiled(torch.full((8, 16), float(i), device="npu")) for i in range(4)]
        for i, out in enumerate(outs):  # earlier results are not overwritten by later replays
            torch.testing.assert_close(out.cpu(), model(torch.full((8, 16), float(i), device="npu")).cpu())
