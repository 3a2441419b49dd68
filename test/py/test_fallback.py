"""The CPU fallback: numerics vs CPU, per-op warning once, counters, out=/in-place semantics, disable switch."""

import warnings

import pytest
import torch
import torch.nn.functional as F

import torch_npu
from torch_npu import _C


def _counts_after(fn):
    before = _C._fallback_counts()
    fn()
    after = _C._fallback_counts()
    return {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}


def test_warns_once_per_op_with_the_exact_text_and_counts_every_call():
    # linalg factorizations have no kernel (special.i1e, used before, compiles now).
    x = torch.rand(4, 4).npu()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        delta = _counts_after(lambda: torch.linalg.det(x))
        second = _counts_after(lambda: torch.linalg.det(x))
    (op,) = delta
    assert op.startswith("aten::_linalg_det") and delta[op] == 1 and second == {op: 1}
    texts = [str(w.message) for w in caught if "NPU backend" in str(w.message)]
    expected = f"{op} is not currently supported on the NPU backend and will fall back to run on the CPU"
    assert len(texts) == 1 and texts[0].startswith(expected), texts


def test_disable_switch_raises_with_an_ops_err_code(monkeypatch):
    x = torch.rand(4, 4).npu()
    monkeypatch.setenv("TORCH_NPU_FALLBACK_CPU_DISABLE", "1")
    with pytest.raises(NotImplementedError, match="TORCH_NPU_FALLBACK_CPU_DISABLE(.|\\n)*ERR01007"):
        torch.linalg.det(x)
    monkeypatch.delenv("TORCH_NPU_FALLBACK_CPU_DISABLE")
    assert torch.allclose(torch.linalg.det(x).cpu(), torch.linalg.det(x.cpu()))


@pytest.mark.parametrize(
    "fn",
    [
        lambda a, b: a + b * 2,
        lambda a, b: a @ b.t(),
        lambda a, b: torch.softmax(a, dim=1),
        lambda a, b: torch.cat([a, b], dim=0),
        lambda a, b: a.sum(dim=0),
        lambda a, b: torch.where(a > 0, a, b),
        lambda a, b: a[torch.tensor([0, 2])],
        lambda a, b: F.conv2d(a.view(1, 1, 4, 6), b.view(1, 1, 4, 6)[:, :, :3, :3]),
        lambda a, b: torch.sort(a, dim=1)[0],
        lambda a, b: torch.max(a, dim=1).indices,
    ],
)
def test_fallback_matches_cpu(fn):
    a, b = torch.randn(4, 6), torch.randn(4, 6)
    expected = fn(a, b)
    got = fn(a.npu(), b.npu())
    assert got.device.type == "npu"
    torch.testing.assert_close(got.cpu(), expected)


def test_conv2d_forward_and_backward_match_cpu():
    x = torch.randn(2, 3, 8, 8, requires_grad=True)
    conv = torch.nn.Conv2d(3, 4, 3, padding=1, groups=1)
    xn = x.detach().npu().requires_grad_()
    conv_npu = torch.nn.Conv2d(3, 4, 3, padding=1).npu()
    conv_npu.load_state_dict(conv.state_dict())
    conv(x).square().sum().backward()
    conv_npu(xn).square().sum().backward()
    torch.testing.assert_close(xn.grad.cpu(), x.grad)
    torch.testing.assert_close(conv_npu.weight.grad.cpu(), conv.weight.grad)
    torch.testing.assert_close(conv_npu.bias.grad.cpu(), conv.bias.grad)
    tconv = torch.nn.ConvTranspose2d(4, 2, 3, groups=2)
    y = torch.randn(1, 4, 5, 5)
    torch.testing.assert_close(tconv.npu()(y.npu()).cpu(), tconv.cpu()(y))


def test_index_put_with_npu_indices():
    a = torch.zeros(5)
    n = a.npu()
    idx = torch.tensor([1, 3])
    n[idx.npu()] = torch.tensor([7.0, 9.0]).npu()
    a[idx] = torch.tensor([7.0, 9.0])
    assert torch.equal(n.cpu(), a)


def test_out_argument_is_written_and_returned():
    a, b = torch.randn(3, 3).npu(), torch.randn(3, 3).npu()
    out = torch.empty(3, 3, device="npu")
    ret = torch.mul(a, b, out=out)
    assert ret is out
    assert torch.equal(out.cpu(), a.cpu() * b.cpu())


def test_out_argument_that_must_grow_is_resized_on_npu():
    a = torch.randn(4, 5).npu()
    out = torch.empty(0, device="npu")
    torch.neg(a, out=out)
    assert out.shape == (4, 5) and out.device.type == "npu"
    assert torch.equal(out.cpu(), -a.cpu())


def test_in_place_returns_the_same_tensor():
    a = torch.ones(4).npu()
    ret = a.exp_()
    assert ret is a
    torch.testing.assert_close(a.cpu(), torch.full((4,), torch.e))


def test_multi_output_and_list_outputs():
    a = torch.randn(5, 4)
    vals, idx = torch.topk(a.npu(), 2, dim=1)
    ref_vals, ref_idx = torch.topk(a, 2, dim=1)
    assert torch.equal(vals.cpu(), ref_vals) and torch.equal(idx.cpu(), ref_idx)
    chunks = torch.unbind(a.npu(), 0)
    assert all(c.device.type == "npu" for c in chunks)


def test_fallback_orders_after_queued_stream_work():
    x = torch.zeros(1024, device="npu")
    torch.npu.synchronize()
    _C._npu_sleep_on_stream(100.0)
    x.fill_(2.0)  # queued behind the sleep
    y = x * 3  # fallback: must see the fill
    assert torch.equal(y.cpu(), torch.full((1024,), 6.0))


def test_training_an_mlp_matches_cpu():
    torch.manual_seed(0)
    cpu_model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    npu_model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    npu_model.load_state_dict(cpu_model.state_dict())
    npu_model.npu()
    x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))
    losses = []
    for model, xs, ys in ((cpu_model, x, y), (npu_model, x.npu(), y.npu())):
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for _ in range(5):
            opt.zero_grad()
            loss = F.cross_entropy(model(xs), ys)
            loss.backward()
            opt.step()
        losses.append(loss.item())
    assert losses[0] == pytest.approx(losses[1], rel=1e-5)
    for p_cpu, p_npu in zip(cpu_model.parameters(), npu_model.parameters()):
        torch.testing.assert_close(p_npu.cpu(), p_cpu)


def test_counters_reset():
    torch.ones(2).npu().sin()
    assert _C._fallback_counts()
    torch_npu._C._reset_fallback_counts()
    assert _C._fallback_counts() == {}
