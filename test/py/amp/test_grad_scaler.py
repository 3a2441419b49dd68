"""GradScaler on the NPU: the _amp_* kernels against CPU torch, step skipping and recovery for both
scalers, torch_npu's `dynamic` flag and state_dict, bad input, and no device-to-host sync."""

from __future__ import annotations

import pytest
import torch

import torch_npu

INF, NAN = float("inf"), float("nan")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("poison", [None, INF, -INF, NAN])
def test_unscale_kernel_matches_cpu(no_fallback, dtype, poison):
    torch.manual_seed(0)
    grads = [torch.randn(5, 3).to(dtype), torch.randn(7).to(dtype), torch.randn(2, 2, 4).to(dtype)]
    if poison is not None:
        grads[1][3] = poison
    found_cpu, inv_cpu = torch.zeros(1), torch.full((1,), 0.25)
    npu_grads = [g.npu() for g in grads]
    found, inv = found_cpu.npu(), inv_cpu.npu()
    torch._amp_foreach_non_finite_check_and_unscale_(grads, found_cpu, inv_cpu)
    torch._amp_foreach_non_finite_check_and_unscale_(npu_grads, found, inv)
    assert found.cpu().item() == found_cpu.item() == (0.0 if poison is None else 1.0)
    for g, expected in zip(npu_grads, grads):
        torch.testing.assert_close(g.cpu(), expected, equal_nan=True)
    row = no_fallback()["npu::_npu_amp_unscale"]
    assert row["compiled"] == row["pipeline"] == 3  # built by the ascend pipeline, not from linalg


def test_update_scale_kernel_matches_cpu(no_fallback):
    # growth every 2 clean steps, backoff on inf, a growth past float32's range keeps the scale
    cases = [(4.0, [0, 0, 0, 1, 0, 0]), (3.0e38, [0, 0, 0])]
    for init, founds in cases:
        states = [(torch.full((1,), init), torch.zeros(1, dtype=torch.int32))]
        states.append((states[0][0].npu(), states[0][1].npu()))
        for f in founds:
            for scale, tracker in states:
                found = torch.full((1,), float(f), device=scale.device)
                torch._amp_update_scale_(scale, tracker, found, 2.0, 0.5, 2)
            (cpu_scale, cpu_tracker), (scale, tracker) = states
            assert scale.cpu().item() == cpu_scale.item() and tracker.cpu().item() == cpu_tracker.item()
    row = no_fallback()["npu::_npu_amp_update_scale"]
    assert row["compiled"] == row["pipeline"] == 9


def test_amp_ops_reject_bad_input():
    g = [torch.randn(3, device="npu")]
    found, inv = torch.zeros(1, device="npu"), torch.ones(1, device="npu")
    with pytest.raises(RuntimeError, match="found_inf must be a float tensor.(.|\n)*ERR01002"):
        torch._amp_foreach_non_finite_check_and_unscale_(g, found.double(), inv)
    with pytest.raises(RuntimeError, match="inv_scale must be a NPU tensor.(.|\n)*ERR01001"):
        torch._amp_foreach_non_finite_check_and_unscale_(g, found, inv.cpu())
    with pytest.raises(RuntimeError, match="inv_scale must be a 1-element tensor"):
        torch._amp_foreach_non_finite_check_and_unscale_(g, found, torch.ones(2, device="npu"))
    with pytest.raises(RuntimeError, match="one of scaled_grads was not a NPU tensor"):
        torch._amp_foreach_non_finite_check_and_unscale_(g + [torch.ones(2)], found, inv)
    if torch.npu.device_count() > 1:
        with pytest.raises(RuntimeError, match="scaled_grads must be on the same device"):
            torch._amp_foreach_non_finite_check_and_unscale_(g + [torch.ones(2, device="npu:1")], found, inv)
    scale, tracker = torch.ones(1, device="npu"), torch.zeros(1, dtype=torch.int32, device="npu")
    with pytest.raises(RuntimeError, match="growth_tracker must be an int tensor"):
        torch._amp_update_scale_(scale, tracker.float(), found, 2.0, 0.5, 2)
    with pytest.raises(RuntimeError, match="current_scale must be a float tensor"):
        torch._amp_update_scale_(scale.half(), tracker, found, 2.0, 0.5, 2)
    # the device stays usable
    torch._amp_update_scale_(scale, tracker, found, 2.0, 0.5, 2)
    assert tracker.cpu().item() == 1


def _model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)).npu()


SCALERS = {
    "torch.amp": lambda **kw: torch.amp.GradScaler("npu", **kw),
    "torch.npu.amp": lambda **kw: torch.npu.amp.GradScaler(**kw),
}


def _train_step(model, opt, scaler, x, poison=False):
    opt.zero_grad()
    loss = model(x).square().mean()
    scaler.scale(loss).backward()
    if poison:
        with torch.no_grad():
            model[0].weight.grad[0, 0] = INF
    scaler.step(opt)
    scaler.update()


@pytest.mark.parametrize("make_scaler", SCALERS.values(), ids=SCALERS.keys())
def test_inf_step_is_skipped_and_training_recovers(no_fallback, make_scaler):
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = make_scaler(init_scale=1024.0, growth_interval=2)
    x = torch.randn(16, 6, device="npu")
    before = [p.detach().cpu().clone() for p in model.parameters()]
    _train_step(model, opt, scaler, x, poison=True)
    assert scaler.get_scale() == 512.0
    for p, b in zip(model.parameters(), before):
        torch.testing.assert_close(p.detach().cpu(), b, rtol=0, atol=0)
    _train_step(model, opt, scaler, x)
    assert scaler.get_scale() == 512.0
    assert any(not torch.equal(p.detach().cpu(), b) for p, b in zip(model.parameters(), before))
    _train_step(model, opt, scaler, x)
    assert scaler.get_scale() == 1024.0  # two clean steps: grown


def test_unscaled_gradients_match_unscaled_training():
    model, reference = _model(), _model()
    x = torch.randn(16, 6, device="npu")
    scaler = torch.npu.amp.GradScaler(init_scale=256.0)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler.scale(model(x).square().mean()).backward()
    scaler.unscale_(opt)
    reference(x).square().mean().backward()
    for p, r in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad.cpu(), r.grad.cpu())


def test_unscale_and_update_do_not_sync_with_the_host():
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.npu.amp.GradScaler(init_scale=1024.0)
    loss = model(torch.randn(16, 6, device="npu")).square().mean()
    scaler.scale(loss).backward()
    torch.npu.set_sync_debug_mode("error")
    try:
        scaler.unscale_(opt)
        found_inf = scaler._per_optimizer_states[id(opt)]["found_inf_per_device"]
        scaler._per_optimizer_states[id(opt)]["stage"] = torch.amp.grad_scaler.OptState.STEPPED
        scaler.update()
    finally:
        torch.npu.set_sync_debug_mode(0)
    assert sum(v.item() for v in found_inf.values()) == 0.0


def test_static_scaler_keeps_its_scale_and_unscales_without_checking():
    # torch_npu's dynamic=False: a static loss scale. Gradients are multiplied by 1/scale, infs are not
    # looked for (torch_npu's _unscale_grads_ skips _amp_foreach_non_finite_check_and_unscale_), every
    # step runs and update() leaves the scale alone.
    model, reference = _model(), _model()
    opt, ref_opt = torch.optim.SGD(model.parameters(), lr=0.1), torch.optim.SGD(reference.parameters(), lr=0.1)
    scaler = torch.npu.amp.GradScaler(init_scale=64.0, growth_interval=1, dynamic=False)
    x = torch.randn(16, 6, device="npu")
    for _ in range(3):
        _train_step(model, opt, scaler, x)
        ref_opt.zero_grad()
        reference(x).square().mean().backward()
        ref_opt.step()
        assert scaler.get_scale() == 64.0
    for p, r in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p.detach().cpu(), r.detach().cpu())
    _train_step(model, opt, scaler, x, poison=True)
    assert scaler.get_scale() == 64.0
    assert not torch.isfinite(model[0].weight.detach().cpu()).all(), "a static scaler does not skip (torch_npu)"


def test_static_scaler_unscales_a_fused_optimizers_combined_gradients(no_fallback):
    model, reference = _model(), _model()
    opt = torch_npu.optim.NpuFusedSGD(model.parameters(), lr=0.1)
    scaler = torch.npu.amp.GradScaler(init_scale=32.0, dynamic=False)
    x = torch.randn(16, 6, device="npu")
    scaler.scale(model(x).square().mean()).backward()
    scaler.unscale_(opt)
    reference(x).square().mean().backward()
    for p, r in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad.cpu(), r.grad.cpu())


@pytest.mark.parametrize("name", SCALERS)
def test_state_dict_round_trips(name):
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    kwargs = dict(init_scale=1024.0, growth_interval=3) | ({"dynamic": False} if name == "torch.npu.amp" else {})
    scaler = SCALERS[name](**kwargs)
    x = torch.randn(16, 6, device="npu")
    _train_step(model, opt, scaler, x, poison=True)
    _train_step(model, opt, scaler, x)
    state = scaler.state_dict()
    if name == "torch.npu.amp":
        assert state["dynamic"] is False
    restored = SCALERS[name]()
    restored.load_state_dict(state)
    assert restored.state_dict() == state
    assert restored.get_scale() == scaler.get_scale() and restored._get_growth_tracker() == scaler._get_growth_tracker()


def test_fused_optimizer_gradients_unscale_per_combined_buffer(no_fallback):
    model = _model()
    opt = torch_npu.optim.NpuFusedSGD(model.parameters(), lr=0.1)
    reference = _model()
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    scaler = torch.npu.amp.GradScaler(init_scale=128.0)
    x = torch.randn(16, 6, device="npu")
    for _ in range(3):
        _train_step(model, opt, scaler, x)
        ref_opt.zero_grad()
        reference(x).square().mean().backward()
        ref_opt.step()
    for p, r in zip(model.parameters(), reference.parameters()):
        torch.testing.assert_close(p.detach().cpu(), r.detach().cpu())
    # one float32 buffer: one unscale kernel per step, not one per parameter
    assert no_fallback()["npu::_npu_amp_unscale"]["compiled"] == 3
