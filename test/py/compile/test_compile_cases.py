"""The npu-mlir backend beyond one MLP: registration, a CNN with BatchNorm and max-pool (running statistics
written in the graph, no split), a recompile per new shape (static), dynamic=True and mark_dynamic.
The warm start in a second process is in test_compile_training.py, on the MLP's graphs."""

import copy

import pytest
import torch

import torch_npu  # noqa: F401

TOL = dict(rtol=1e-4, atol=1e-5)


def test_backend_registered_once():
    from torch._dynamo.backends.registry import list_backends, lookup_backend

    from torch_npu.dynamo.backend import npu_mlir

    assert list_backends().count("npu-mlir") == 1
    assert lookup_backend("npu-mlir") is npu_mlir


def _cnn() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                               torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(8 * 4 * 4, 5))


def test_cnn_with_batch_norm_trains_as_eager(compile_stats):
    # Against eager on the CPU (no eager npu compiles): outputs, gradients, parameters, running statistics.
    torch.manual_seed(0)
    reference = _cnn()
    model = copy.deepcopy(reference).npu()
    compiled = torch.compile(model, backend="npu-mlir")
    opts = [torch.optim.SGD(m.parameters(), lr=0.05) for m in (model, reference)]
    for _ in range(10):
        x, y = torch.randn(4, 3, 8, 8), torch.randint(0, 5, (4,))
        outs = []
        for run, opt, device in zip((compiled, reference), opts, ("npu", "cpu")):
            opt.zero_grad()
            out = run(x.to(device))
            torch.nn.functional.cross_entropy(out, y.to(device)).backward()
            opt.step()
            outs.append(out.detach().cpu())
        torch.testing.assert_close(outs[0], outs[1], **TOL)
        for p, q in zip(model.parameters(), reference.parameters()):
            torch.testing.assert_close(p.grad.cpu(), q.grad, **TOL)
            torch.testing.assert_close(p.detach().cpu(), q.detach(), **TOL)
        for b, c in zip(model.buffers(), reference.buffers()):
            torch.testing.assert_close(b.cpu(), c, **TOL)
    stats = compile_stats()
    # Forward and backward compiled whole (max_pool2d_with_indices split them until ascend-fuse's d47a7d5).
    assert stats["split_nodes"] == {} and stats["graphs_compiled"] == 2 and stats["kernels"] > 10, stats
    assert stats["mutations_aliased"] >= 2 and stats["mutations_copied"] == 0, stats  # running statistics


def test_new_shape_recompiles(compile_stats):
    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU())
    compiled = torch.compile(copy.deepcopy(reference).npu(), backend="npu-mlir", dynamic=False)
    with torch.no_grad():
        for batch in (8, 4, 8):
            x = torch.randn(batch, 16)
            torch.testing.assert_close(compiled(x.npu()).cpu(), reference(x), **TOL)
    stats = compile_stats()
    assert stats["recompiles"] == 1 and stats["inference_graphs"] == 2, stats


@pytest.mark.parametrize("how", ["dynamic=True", "mark_dynamic"])
def test_dynamic_shapes_compile_once_per_smaller_size(compile_stats, how):
    # A symbolic graph of rows (dynamo/dynamic.py) is compiled for a chunk of the first size it meets;
    # a larger size runs chunk by chunk, a smaller one compiles a chunk of its own (counted).
    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU())
    compiled = torch.compile(copy.deepcopy(reference).npu(), backend="npu-mlir",
                             dynamic=True if how == "dynamic=True" else None)
    with torch.no_grad():
        for batch in (8, 4, 8, 2, 12):
            x = torch.randn(batch, 16)
            xn = x.npu()
            if how == "mark_dynamic":
                torch._dynamo.mark_dynamic(xn, 0)
            torch.testing.assert_close(compiled(xn).cpu(), reference(x), **TOL)
    stats = compile_stats()
    # One Dynamo frame, symbolic from the first call: chunks of 8, 4 and 2.
    assert stats["inference_graphs"] == 1 and stats["shape_generic_graphs"] == 1, stats
    assert stats["graphs_compiled"] == 3 and stats["recompiles"] == 2 and stats["split_nodes"] == {}, stats
