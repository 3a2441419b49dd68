"""NPU random ops: reproducible under manual_seed, driven by the NPU generator, independent of the CPU one."""

import pytest
import torch
import torch.nn.functional as F

import torch_npu  # noqa: F401


def _draws():
    return [
        torch.rand(64, device="npu").cpu(),
        torch.randn(64, device="npu").cpu(),
        torch.randint(0, 100, (64,), device="npu").cpu(),
        torch.empty(64, device="npu").bernoulli_(0.3).cpu(),
        F.dropout(torch.ones(64, device="npu"), 0.5).cpu(),
        torch.randperm(32, device="npu").cpu(),
        torch.empty(64, device="npu").exponential_().cpu(),
        torch.multinomial(torch.ones(10, device="npu"), 5).cpu(),
        torch.normal(torch.zeros(64, device="npu"), 1.0).cpu(),
    ]


def test_manual_seed_reproduces_every_random_op():
    torch.manual_seed(1234)
    first = _draws()
    torch.manual_seed(1234)
    second = _draws()
    for a, b in zip(first, second):
        assert torch.equal(a, b)
    torch.manual_seed(4321)
    assert not torch.equal(_draws()[0], first[0])


def test_npu_stream_does_not_depend_on_the_cpu_generator():
    torch.npu.manual_seed(7)
    a = torch.rand(100, device="npu").cpu()
    torch.npu.manual_seed(7)
    torch.random.default_generator.manual_seed(99)  # CPU only
    torch.rand(1000)  # consumes CPU randomness
    b = torch.rand(100, device="npu").cpu()
    assert torch.equal(a, b)
    torch.random.default_generator.manual_seed(7)
    assert not torch.equal(torch.rand(100), a)  # not the CPU generator's stream either


def test_successive_draws_differ_and_offsets_advance():
    torch.npu.manual_seed(3)
    g = torch.npu.default_generators[0]
    a = torch.rand(10, device="npu")
    offset_after_one = g.get_offset()
    b = torch.rand(10, device="npu")
    assert offset_after_one > 0 and g.get_offset() > offset_after_one
    assert not torch.equal(a.cpu(), b.cpu())


def test_rng_state_save_and_restore():
    torch.npu.manual_seed(11)
    state = torch.npu.get_rng_state()
    assert state.dtype == torch.uint8 and state.device.type == "cpu"
    a = torch.randn(20, device="npu").cpu()
    torch.npu.set_rng_state(state)
    b = torch.randn(20, device="npu").cpu()
    assert torch.equal(a, b)
    assert torch.npu.initial_seed() == 11
    states = torch.npu.get_rng_state_all()
    assert len(states) == torch.npu.device_count()
    torch.npu.set_rng_state_all(states)
    with pytest.raises(RuntimeError, match="ERR00003"):
        torch.npu.set_rng_state(torch.zeros(3, dtype=torch.uint8))


def test_explicit_npu_generator():
    g = torch.Generator("npu").manual_seed(5)
    a = torch.rand(16, device="npu", generator=g).cpu()
    g.manual_seed(5)
    b = torch.rand(16, device="npu", generator=g).cpu()
    assert torch.equal(a, b)
    assert g.device == torch.device("npu:0") and g.initial_seed() == 5
    with pytest.raises(RuntimeError, match="ERR00001"):
        torch.rand(4, generator=g)  # an npu generator cannot drive a CPU op


def test_per_device_generators_are_separate():
    torch.manual_seed(21)
    a0 = torch.rand(8, device="npu:0").cpu()
    a1 = torch.rand(8, device="npu:1").cpu()
    assert torch.equal(a0, a1)  # same seed on every device
    torch.npu.manual_seed(22)  # current device only
    assert torch.npu.default_generators[1].initial_seed() == 21


def test_distributions_have_the_right_statistics():
    torch.npu.manual_seed(0)
    n = 200_000
    u = torch.empty(n, device="npu").uniform_(2.0, 4.0).cpu()
    assert u.min() >= 2.0 and u.max() < 4.0 and abs(u.mean().item() - 3.0) < 0.01
    z = torch.randn(n, device="npu").cpu()
    assert abs(z.mean().item()) < 0.01 and abs(z.std().item() - 1.0) < 0.01
    mask = torch.empty(n, device="npu").bernoulli_(0.25).cpu()
    assert abs(mask.mean().item() - 0.25) < 0.005
    d = F.dropout(torch.ones(n, device="npu"), p=0.4).cpu()
    assert set(d.unique().tolist()) <= {0.0, torch.tensor(1.0 / 0.6).item()}
    assert abs((d == 0).float().mean().item() - 0.4) < 0.005
    r = torch.randint(0, 10, (n,), device="npu").cpu()
    assert r.min() == 0 and r.max() == 9
    p = torch.randperm(1000, device="npu").cpu()
    assert torch.equal(p.sort().values, torch.arange(1000))


def test_dropout_backward_uses_the_mask():
    torch.npu.manual_seed(2)
    x = torch.ones(1000, device="npu", requires_grad=True)
    y = F.dropout(x, 0.5)
    y.sum().backward()
    assert torch.equal(x.grad.cpu(), y.detach().cpu())
