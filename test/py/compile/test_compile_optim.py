"""An optimizer step under torch.compile(backend="npu-mlir"): the foreach ops become per-tensor kernels
(dynamo/foreach.py) and the updates of parameters and optimizer state are written straight into their
buffers (aliased input mutations, no copy after the run); parameters and state match eager's."""

import copy

import pytest
import torch

import torch_npu  # noqa: F401
from torch_npu.dynamo.stats import reset_compile_stats

OPTIMIZERS = {
    "sgd_momentum": lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9, foreach=True),
    "adam_capturable": lambda params: torch.optim.Adam(params, lr=0.01, foreach=True, capturable=True),
    "adam": lambda params: torch.optim.Adam(params, lr=0.01, foreach=True),
}


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_step_compiles_with_aliased_updates(name):
    torch._dynamo.reset()
    reset_compile_stats()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4)).npu()  # test_compile_rng's shapes
    reference = copy.deepcopy(model)
    opt, reference_opt = OPTIMIZERS[name](model.parameters()), OPTIMIZERS[name](reference.parameters())
    step = torch.compile(opt.step, backend="npu-mlir")
    for _ in range(3):
        x = torch.randn(8, 16).npu()
        for m, o, run in ((model, opt, step), (reference, reference_opt, reference_opt.step)):
            o.zero_grad()
            m(x).square().mean().backward()
            run()
        for p, q in zip(model.parameters(), reference.parameters()):
            torch.testing.assert_close(p.detach().cpu(), q.detach().cpu(), rtol=1e-5, atol=1e-6)
            for key, value in opt.state[p].items():
                torch.testing.assert_close(value.cpu(), reference_opt.state[q][key].cpu(), rtol=1e-5, atol=1e-6)
    stats = torch.npu.compile_stats()
    assert stats["mutations_aliased"] >= 2 * len(list(model.parameters())) and stats["mutations_copied"] == 0, stats
    if name == "adam":
        # Without capturable=True the step counts are CPU tensors: their updates stay host ops.
        assert {row["reason"] for row in stats["split_nodes"].values()} == {"it computes on CPU tensors"}, stats
    else:
        assert stats["split_nodes"] == {}, stats
    torch._dynamo.reset()
