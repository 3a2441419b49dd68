"""Host tensors a graph moves to npu inside it: a CPU tensor the graph reads (`W.to(x.device)`) is
copied to npu by each call, a host constant (`torch.tensor([...], device=x.device)`, a CPU arange
moved to npu) is made and uploaded once; a CPU parameter's gradient is copied back to the host.
Results as eager; nothing splits the graph."""

import torch

import torch_npu  # noqa: F401


def test_host_tensor_moved_inside_the_graph_is_copied_each_call(compile_stats):
    torch.manual_seed(0)
    w = torch.randn(8, 6)
    f = torch.compile(lambda x: torch.relu(x @ w.to(x.device)) + 1, backend="npu-mlir")
    x = torch.randn(4, 8)
    torch.testing.assert_close(f(x.npu()).cpu(), torch.relu(x @ w) + 1, rtol=1e-4, atol=1e-4)
    w.mul_(-2)  # the next call reads the host tensor as it is now, not a copy made at compile time
    torch.testing.assert_close(f(x.npu()).cpu(), torch.relu(x @ w) + 1, rtol=1e-4, atol=1e-4)
    stats = compile_stats()
    assert stats["split_nodes"] == {} and stats["graphs_compiled"] == 1, stats


def test_host_constants_are_uploaded_once(compile_stats):
    scale = torch.tensor([1.0, -2.0, 3.0, 0.5])

    def fn(x):
        bias = torch.tensor([0.25, 0.5, 0.75, 1.0], device=x.device)
        return x * scale.to(x.device) + bias + torch.arange(4).to(x.device)

    x = torch.randn(3, 4)
    f = torch.compile(fn, backend="npu-mlir")
    for _ in range(2):
        torch.testing.assert_close(f(x.npu()).cpu(), fn(x))
    stats = compile_stats()
    assert stats["split_nodes"] == {} and stats["graphs_compiled"] == 1, stats


def test_cpu_parameter_trained_through_the_graph(compile_stats):
    torch.manual_seed(0)
    w = torch.randn(8, 6, requires_grad=True)
    w_ref = w.detach().clone().requires_grad_()
    x = torch.randn(4, 8)
    x_npu = x.npu().requires_grad_()
    x_ref = x.clone().requires_grad_()
    loss = torch.compile(lambda x: torch.tanh(x @ w.to(x.device)).sum(), backend="npu-mlir")(x_npu)
    loss.backward()
    torch.tanh(x_ref @ w_ref).sum().backward()
    torch.testing.assert_close(loss.cpu(), torch.tanh(x_ref @ w_ref).sum(), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(x_npu.grad.cpu(), x_ref.grad, rtol=1e-4, atol=1e-4)
    assert w.grad.device.type == "cpu"
    torch.testing.assert_close(w.grad, w_ref.grad, rtol=1e-4, atol=1e-4)
    stats = compile_stats()
    assert stats["split_nodes"] == {} and stats["host_copies"] == 1, stats
