"""Random ops in NPU graphs (torch's test_graph_rng_*): each replay draws new numbers, the same
numbers the ops would draw eagerly at that point of the generator's sequence."""

import pytest
import torch
import torch.nn.functional as F

import torch_npu  # noqa: F401


@pytest.mark.parametrize("op, kwargs", [(F.dropout, {"p": 0.1}), (F.dropout, {"p": 0.5})])
def test_graph_rng_functional(op, kwargs):
    size = 10000
    a = torch.randn((size,), device="npu", dtype=torch.float)
    # Control: six eager invocations.
    torch.npu.manual_seed(5)
    eager_out = a
    for _ in range(6):
        eager_out = op(eager_out, **kwargs)

    graph_in = a.clone()
    stream = torch.npu.Stream()
    stream.wait_stream(torch.npu.current_stream())
    with torch.npu.stream(stream):
        torch.npu.manual_seed(5)
        g = torch.npu.NPUGraph()
        torch.npu.empty_cache()
        g.capture_begin()
        graph_out = graph_in
        for _ in range(2):
            graph_out = op(graph_out, **kwargs)
        g.capture_end()
    torch.npu.current_stream().wait_stream(stream)
    # graphed -> eager -> graphed: six invocations in all, as the control.
    g.replay()
    out = op(graph_out, **kwargs)
    out = op(out, **kwargs)
    graph_in.copy_(out)
    g.replay()
    torch.testing.assert_close(graph_out.cpu(), eager_out.cpu(), rtol=0, atol=0)


TORCH_WITH_ARGS = [
    ("bernoulli", lambda inp: (inp.clone(),), {}),
    ("normal", lambda inp: (inp.clone() + 1, 1.0), {}),
    ("rand", lambda inp: (10000,), {"device": "npu", "dtype": torch.float}),
    ("randint", lambda inp: (0, 3, (10000,)), {"device": "npu", "dtype": torch.float}),
    ("randn", lambda inp: (10000,), {"device": "npu", "dtype": torch.float}),
]
TENSOR_WITH_ARGS = [
    ("bernoulli_", lambda inp: (inp.clone(),)),
    ("cauchy_", lambda inp: ()),
    ("exponential_", lambda inp: ()),
    ("geometric_", lambda inp: (0.3,)),
    ("log_normal_", lambda inp: ()),
    ("normal_", lambda inp: ()),
    ("random_", lambda inp: ()),
    ("uniform_", lambda inp: ()),
]


def _run_distribution(module, op, args, kwargs):
    size = 10000
    alloc = torch.empty((size,), device="npu", dtype=torch.float)

    def draw(target=None):
        if module == "torch":
            return getattr(torch, op)(*args, **kwargs)
        getattr(target, op)(*args)
        return target

    torch.npu.manual_seed(5)
    # A dummy op moves the state before the controls are drawn.
    draw(alloc.clone())
    control1 = draw(alloc.clone())
    control2 = draw(alloc.clone())

    stream = torch.npu.Stream()
    stream.wait_stream(torch.npu.current_stream())
    with torch.npu.stream(stream):
        torch.npu.manual_seed(5)
        g = torch.npu.NPUGraph()
        torch.npu.empty_cache()
        if module == "torch":
            g.capture_begin()
            t1 = draw()
            t2 = draw()
            g.capture_end()
        else:
            t1 = alloc.clone()
            t2 = alloc.clone()
            g.capture_begin()
            draw(t1)
            draw(t2)
            g.capture_end()
    torch.npu.current_stream().wait_stream(stream)
    assert not torch.equal(control1.cpu(), t1.cpu())  # capture drew nothing
    # The same dummy prelude; replay must pick up its state increment.
    draw(alloc.clone())
    g.replay()
    torch.testing.assert_close(t1.cpu(), control1.cpu(), rtol=0, atol=0)
    torch.testing.assert_close(t2.cpu(), control2.cpu(), rtol=0, atol=0)
    torch.npu.synchronize()


@pytest.mark.parametrize("op, make_args, kwargs", TORCH_WITH_ARGS, ids=[t[0] for t in TORCH_WITH_ARGS])
def test_graph_rng_distributions_torch(op, make_args, kwargs):
    inp = torch.rand((10000,), device="npu", dtype=torch.float)
    _run_distribution("torch", op, make_args(inp), kwargs)


@pytest.mark.parametrize("op, make_args", TENSOR_WITH_ARGS, ids=[t[0] for t in TENSOR_WITH_ARGS])
def test_graph_rng_distributions_tensor(op, make_args):
    inp = torch.rand((10000,), device="npu", dtype=torch.float)
    _run_distribution("Tensor", op, make_args(inp), {})


def test_replays_draw_new_numbers_and_registered_generators_are_graph_safe():
    gen = torch.Generator("npu")
    gen.manual_seed(11)
    g = torch.npu.NPUGraph()
    g.register_generator_state(gen)
    with torch.npu.graph(g):
        x = torch.rand(256, device="npu", generator=gen)
        y = torch.rand(256, device="npu")  # the default generator
    draws = []
    for _ in range(3):
        g.replay()
        draws.append((x.cpu().clone(), y.cpu().clone()))
    assert not torch.equal(draws[0][0], draws[1][0]) and not torch.equal(draws[1][1], draws[2][1])
    # Eager draws from the same starting state give the replays' numbers.
    check = torch.Generator("npu")
    check.manual_seed(11)
    for xs, _ in draws:
        torch.testing.assert_close(torch.rand(256, device="npu", generator=check).cpu(), xs, rtol=0, atol=0)
    assert gen.get_offset() == check.get_offset()


def test_graphsafe_get_and_set_state():
    # torch.cuda's graph-safe states: graphsafe_get_state shares the state object, set_state switches onto one.
    g = torch.Generator(device="npu")
    g.manual_seed(5)
    shared = g.graphsafe_get_state()
    x = torch.rand(8, device="npu", generator=g)
    assert shared.get_offset() == g.get_offset() == 8
    fresh = torch.Generator(device="npu")
    fresh.manual_seed(5)
    g.graphsafe_set_state(fresh.graphsafe_get_state())
    torch.testing.assert_close(torch.rand(8, device="npu", generator=g).cpu(), x.cpu(), rtol=0, atol=0)
    assert fresh.get_offset() == 8 and shared.get_offset() == 8
    g.graphsafe_set_state(shared)
    assert g.get_offset() == 8
    with pytest.raises(RuntimeError, match="ERR00002"):
        g.graphsafe_set_state(torch.Generator())  # a CPU generator's state


def test_graph_replays_the_state_it_was_captured_with():
    g = torch.Generator(device="npu")
    g.manual_seed(11)
    captured = g.graphsafe_get_state()
    graph = torch.npu.NPUGraph()
    graph.register_generator_state(g)
    stream = torch.npu.Stream()
    stream.wait_stream(torch.npu.current_stream())
    with torch.npu.stream(stream):
        graph.capture_begin()
        out = torch.rand(100, device="npu", generator=g)
        graph.capture_end()
    torch.npu.current_stream().wait_stream(stream)
    other = torch.Generator(device="npu")
    other.manual_seed(99)
    g.graphsafe_set_state(other.graphsafe_get_state())
    graph.replay()
    assert other.get_offset() == 0 and captured.get_offset() == 100  # the replay took its 100 counters
    control = torch.Generator(device="npu")
    control.manual_seed(11)
    torch.testing.assert_close(out.cpu(), torch.rand(100, device="npu", generator=control).cpu(), rtol=0, atol=0)
