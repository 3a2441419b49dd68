"""Batch norm on npu vs CPU: outputs, gradients and the running statistics it writes, compiled.

The running statistics are the point: native_batch_norm's schema does not say it writes them, and a
compiled kernel that dropped the write left every BatchNorm model evaluating with mean 0 / var 1.
"""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F

from conftest import assert_no_fallback

TOLERANCES = {torch.float32: {"atol": 1e-5, "rtol": 1e-4}, torch.float16: {"atol": 2e-3, "rtol": 2e-3},
              torch.bfloat16: {"atol": 2e-2, "rtol": 2e-2}}
SHAPES = {1: (6, 4, 5), 2: (4, 4, 3, 5), 3: (2, 4, 3, 2, 3)}
MODULES = {1: torch.nn.BatchNorm1d, 2: torch.nn.BatchNorm2d, 3: torch.nn.BatchNorm3d}


def _close(actual: torch.Tensor, expected: torch.Tensor, dtype: torch.dtype = torch.float32) -> None:
    torch.testing.assert_close(actual.cpu(), expected, **TOLERANCES[dtype])


def _batch_norm_fell_back(stats: dict) -> dict:
    return {op: row["fallback"] for op, row in stats.items() if "batch_norm" in op and row["fallback"]}


def _train_and_evaluate(cpu: torch.nn.Module, dims: int, dtype: torch.dtype, steps: int = 3) -> None:
    """`steps` forward + backward steps in training mode, then eval: npu equals CPU throughout."""
    npu = copy.deepcopy(cpu).npu()
    for step in range(steps):
        x = (torch.randn(SHAPES[dims]) * (1 + step) + step).to(dtype)
        grad = torch.randn(SHAPES[dims]).to(dtype)
        xc, xn = x.clone().requires_grad_(), x.npu().requires_grad_()
        yc, yn = cpu(xc), npu(xn)
        _close(yn, yc.detach(), dtype)
        yc.backward(grad)
        yn.backward(grad.npu())
        _close(xn.grad, xc.grad, dtype)
        for pc, pn in zip(cpu.parameters(), npu.parameters()):
            _close(pn.grad, pc.grad, dtype)
        for (name, bc), bn in zip(cpu.named_buffers(), npu.buffers()):
            if name == "num_batches_tracked":
                assert int(bn.cpu()) == int(bc)
            else:
                _close(bn, bc, dtype)
    cpu.eval()
    npu.eval()
    x = torch.randn(SHAPES[dims]).to(dtype)
    _close(npu(x.npu()), cpu(x).detach(), dtype)


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_running_statistics_follow_cpu(dims, eager_stats):
    torch.manual_seed(dims)
    module = MODULES[dims](4, momentum=0.3)
    with torch.no_grad():
        module.weight.uniform_(0.5, 1.5)
        module.bias.uniform_(-0.5, 0.5)
    _train_and_evaluate(module, dims, torch.float32)
    assert_no_fallback()


@pytest.mark.parametrize("affine", [True, False])
def test_cumulative_average_and_affine_off(affine, eager_stats):
    # momentum=None averages over num_batches_tracked (1/n per step): a kernel parameter, one compile.
    torch.manual_seed(3)
    _train_and_evaluate(torch.nn.BatchNorm2d(4, momentum=None, affine=affine), 2, torch.float32, steps=4)
    assert not _batch_norm_fell_back(eager_stats())
    training = [row for op, row in eager_stats().items() if op == "aten::native_batch_norm"]
    assert training and training[0]["compiled"] == 5 and training[0]["misses"] <= 2


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_inputs_with_float_statistics(dtype, eager_stats):
    # What autocast runs: half activations, float32 weight and running statistics.
    torch.manual_seed(4)
    module = torch.nn.BatchNorm2d(4, momentum=0.2)
    npu = copy.deepcopy(module).npu()
    for step in range(2):
        x = (torch.randn(SHAPES[2]) + step).to(dtype)
        _close(npu(x.npu()), module(x).detach(), dtype)
        _close(npu.running_mean, module.running_mean)
        _close(npu.running_var, module.running_var)
    module.eval()
    npu.eval()
    x = torch.randn(SHAPES[2]).to(dtype)
    _close(npu(x.npu()), module(x).detach(), dtype)
    assert not _batch_norm_fell_back(eager_stats())


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_module(dtype, eager_stats):
    torch.manual_seed(5)
    _train_and_evaluate(torch.nn.BatchNorm1d(4).to(dtype), 1, dtype, steps=2)
    assert not _batch_norm_fell_back(eager_stats())


def test_functional_calls_write_exactly_the_given_tensors(eager_stats):
    torch.manual_seed(6)
    x = torch.randn(5, 3, 4)
    mean, var = torch.randn(3), torch.rand(3) + 0.5
    mean_n, var_n = mean.npu(), var.npu()
    ptrs = (mean_n.data_ptr(), var_n.data_ptr())
    y = F.batch_norm(x.npu(), mean_n, var_n, training=True, momentum=0.25, eps=1e-3)
    _close(y, F.batch_norm(x, mean, var, training=True, momentum=0.25, eps=1e-3))
    _close(mean_n, mean)
    _close(var_n, var)
    assert (mean_n.data_ptr(), var_n.data_ptr()) == ptrs
    # A strided view of a larger buffer is written through, the rest of the buffer untouched.
    stats, stats_n = torch.zeros(2, 3), torch.zeros(2, 3).npu()
    stats[1], stats_n[1] = 1.0, 1.0
    F.batch_norm(x.npu(), stats_n[0], stats_n[1], training=True)
    F.batch_norm(x, stats[0], stats[1], training=True)
    _close(stats_n, stats)
    # No running statistics in training, and eval mode: nothing is written, outputs still match.
    _close(F.batch_norm(x.npu(), None, None, training=True), F.batch_norm(x, None, None, training=True))
    before = mean_n.cpu()
    _close(F.batch_norm(x.npu(), mean_n, var_n, training=False), F.batch_norm(x, mean, var, training=False))
    _close(mean_n, before)
    assert not _batch_norm_fell_back(eager_stats())


def test_statistics_are_written_on_the_stream_without_a_host_sync(eager_stats):
    x = torch.randn(8, 3, 4, 4)
    mean, var = torch.zeros(3), torch.ones(3)
    xn, mean_n, var_n = x.npu(), mean.npu(), var.npu()
    F.batch_norm(xn, mean_n, var_n, training=True)  # compiles
    F.batch_norm(x, mean, var, training=True)
    torch.npu.set_sync_debug_mode("error")
    try:
        F.batch_norm(xn, mean_n, var_n, training=True)
    finally:
        torch.npu.set_sync_debug_mode("default")
    F.batch_norm(x, mean, var, training=True)
    _close(mean_n, mean)
    _close(var_n, var)
    assert not _batch_norm_fell_back(eager_stats())


def test_direct_legit_op_writes_its_statistics(eager_stats):
    torch.manual_seed(7)
    x, w, b = torch.randn(4, 3, 2, 2), torch.rand(3), torch.randn(3)
    mean, var = torch.randn(3), torch.rand(3) + 0.5
    mean_n, var_n = mean.npu(), var.npu()
    got = torch.ops.aten._native_batch_norm_legit(x.npu(), w.npu(), b.npu(), mean_n, var_n, True, 0.1, 1e-5)
    want = torch.ops.aten._native_batch_norm_legit(x, w, b, mean, var, True, 0.1, 1e-5)
    for g, e in zip(got, want):
        _close(g, e)
    _close(mean_n, mean)
    _close(var_n, var)
    assert not _batch_norm_fell_back(eager_stats())


def _conv_bn_model() -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.Conv2d(8, 8, 3, stride=2, padding=1, bias=False), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 4))


def test_conv_bn_model_trains_and_evaluates_as_on_cpu(eager_stats):
    # The ResNet symptom: equal training losses, but eval used mean 0 / var 1 on npu.
    torch.manual_seed(8)
    cpu = _conv_bn_model()
    npu = copy.deepcopy(cpu).npu()
    opt_c = torch.optim.SGD(cpu.parameters(), lr=0.1, momentum=0.9)
    opt_n = torch.optim.SGD(npu.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):
        x, y = torch.randn(6, 3, 8, 8) * 2 + 1, torch.randint(0, 4, (6,))
        for model, opt, xs, ys in ((cpu, opt_c, x, y), (npu, opt_n, x.npu(), y.npu())):
            opt.zero_grad()
            loss = F.cross_entropy(model(xs), ys)
            loss.backward()
            opt.step()
            model.loss = loss.item()
        torch.testing.assert_close(npu.loss, cpu.loss, atol=1e-4, rtol=1e-4)
    cpu.eval()
    npu.eval()
    x, y = torch.randn(6, 3, 8, 8) * 2 + 1, torch.randint(0, 4, (6,))
    with torch.no_grad():
        want = F.cross_entropy(cpu(x), y).item()
        got = F.cross_entropy(npu(x.npu()), y.npu()).item()
    torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)
    assert not _batch_norm_fell_back(eager_stats())
