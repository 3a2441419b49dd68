"""torch_npu.optim's fused optimizers match torch.optim over 20 steps (float32 + float16 parameters in
one optimizer, bfloat16 too), survive a state_dict round trip mid-run, and step with one kernel per
combined buffer, compiled."""

from __future__ import annotations

import copy
import math

import pytest
import torch

from torch_npu.optim import (
    NpuFusedAdadelta,
    NpuFusedAdam,
    NpuFusedAdamW,
    NpuFusedBertAdam,
    NpuFusedLamb,
    NpuFusedRMSprop,
    NpuFusedRMSpropTF,
    NpuFusedSGD,
)
from torch_npu.utils import is_combined_tensor_valid

# name: (fused class, torch.optim class, hyperparameters, the op each step launches once per dtype buffer)
CONFIGS = {
    "sgd": (NpuFusedSGD, torch.optim.SGD, dict(lr=0.1), "aten::_fused_sgd_"),
    "sgd_momentum": (NpuFusedSGD, torch.optim.SGD, dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01),
                     "aten::_fused_sgd_"),
    "sgd_nesterov": (NpuFusedSGD, torch.optim.SGD, dict(lr=0.05, momentum=0.9, nesterov=True),
                     "aten::_fused_sgd_"),
    "adam": (NpuFusedAdam, torch.optim.Adam, dict(lr=0.01, weight_decay=0.01), "aten::_fused_adam_"),
    "adam_amsgrad": (NpuFusedAdam, torch.optim.Adam, dict(lr=0.01, amsgrad=True), "aten::_fused_adam_"),
    "adamw": (NpuFusedAdamW, torch.optim.AdamW, dict(lr=0.01), "aten::_fused_adamw_"),
    "adamw_amsgrad": (NpuFusedAdamW, torch.optim.AdamW, dict(lr=0.01, weight_decay=0.1, amsgrad=True),
                      "aten::_fused_adamw_"),
    "adadelta": (NpuFusedAdadelta, torch.optim.Adadelta, dict(lr=1.0, weight_decay=0.01), "npu::_npu_fused_adadelta"),
    "rmsprop": (NpuFusedRMSprop, torch.optim.RMSprop, dict(lr=0.01), "npu::_npu_fused_rmsprop"),
    "rmsprop_centered_momentum": (NpuFusedRMSprop, torch.optim.RMSprop,
                                  dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.01), "npu::_npu_fused_rmsprop"),
}
SHAPES = [(8, 6), (6,), (4, 8), (4,)]


def _params(dtypes: list[torch.dtype], device: str) -> list[torch.nn.Parameter]:
    gen = torch.Generator().manual_seed(0)
    return [torch.nn.Parameter(torch.randn(shape, generator=gen).to(dtype).to(device))
            for shape, dtype in zip(SHAPES, dtypes)]


def _targets(dtypes: list[torch.dtype]) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(1)
    return [torch.randn(shape, generator=gen).to(dtype) for shape, dtype in zip(SHAPES, dtypes)]


def _backward(params: list[torch.nn.Parameter], targets: list[torch.Tensor], step: int) -> None:
    # A quadratic bowl whose pull changes per step: gradients are elementwise, so both devices get the same ones.
    loss = sum(((p - t.to(p.device)) * (p - t.to(p.device)) * (1.0 + 0.1 * step)).sum() for p, t in zip(params, targets))
    loss.backward()


def _run(optimizer: torch.optim.Optimizer, params, targets, steps: range) -> None:
    for step in steps:
        optimizer.zero_grad()
        _backward(params, targets, step)
        optimizer.step()


MIXED = [torch.float32, torch.float16, torch.float32, torch.float16]


@pytest.mark.parametrize("name", CONFIGS)
def test_matches_torch_optim_float32_and_float16(no_fallback, name):
    fused_cls, torch_cls, kwargs, kernel = CONFIGS[name]
    targets = _targets(MIXED)
    npu_params, cpu_params = _params(MIXED, "npu"), _params(MIXED, "cpu")
    _run(fused_cls(npu_params, **kwargs), npu_params, targets, range(20))
    _run(torch_cls(cpu_params, foreach=False, **kwargs), cpu_params, targets, range(20))
    for p, r in zip(npu_params, cpu_params):
        # float16: torch.optim rounds every intermediate to float16, the fused kernel once per result.
        tol = 1e-3 if p.dtype == torch.float32 else 4e-3
        torch.testing.assert_close(p.detach().cpu(), r.detach(), rtol=tol, atol=tol)
    # one launch per dtype buffer per step, not one per parameter
    assert no_fallback()[kernel]["compiled"] == 2 * 20


@pytest.mark.parametrize("name", ["sgd_momentum", "adamw", "rmsprop_centered_momentum"])
def test_bfloat16_parameters(no_fallback, name):
    fused_cls, torch_cls, kwargs, _ = CONFIGS[name]
    bf16 = [torch.bfloat16] * 4
    npu_params, cpu_params = _params(bf16, "npu"), _params(bf16, "cpu")
    cpu_params = [torch.nn.Parameter(p.detach().float()) for p in cpu_params]
    targets = _targets(bf16)
    _run(fused_cls(npu_params, **kwargs), npu_params, targets, range(20))
    _run(torch_cls(cpu_params, foreach=False, **kwargs), cpu_params, [t.float() for t in targets], range(20))
    for p, r in zip(npu_params, cpu_params):
        assert p.dtype == torch.bfloat16
        torch.testing.assert_close(p.detach().float().cpu(), r.detach(), rtol=3e-2, atol=3e-2)


def test_bfloat16_adadelta_matches_its_reference_formula(no_fallback):
    # Against float32 torch.optim, bfloat16 Adadelta (lr=1.0, its states in bfloat16 too) drifts by
    # 0.1 in 20 steps: compare with the op's reference on the CPU, each result rounded once to bfloat16.
    fused_cls, _, kwargs, kernel = CONFIGS["adadelta"]
    bf16 = [torch.bfloat16] * 4
    npu_params, cpu_params = _params(bf16, "npu"), _params(bf16, "cpu")
    targets = _targets(bf16)
    _run(fused_cls(npu_params, **kwargs), npu_params, targets, range(20))
    states = [(torch.zeros_like(p), torch.zeros_like(p)) for p in cpu_params]
    for step in range(20):
        for p in cpu_params:
            p.grad = None
        _backward(cpu_params, targets, step)
        with torch.no_grad():
            for n, p in enumerate(cpu_params):
                new_p, square_avg, acc_delta = torch.ops.npu._npu_fused_adadelta(
                    p, p.grad, *states[n], kwargs["lr"], 0.9, 1e-6, kwargs["weight_decay"])
                p.copy_(new_p)
                states[n] = (square_avg, acc_delta)
    for p, r in zip(npu_params, cpu_params):
        assert p.dtype == torch.bfloat16
        torch.testing.assert_close(p.detach().float().cpu(), r.detach().float(), rtol=2e-2, atol=2e-2)
    assert no_fallback()[kernel]["compiled"] == 20  # one launch per step: one bfloat16 buffer


def _state_tensors(optimizer, name):
    return [optimizer.state[p][name] for group in optimizer.param_groups for p in group["params"]]


@pytest.mark.parametrize("name", ["sgd_momentum", "adamw_amsgrad"])
def test_state_dict_round_trip_mid_run(no_fallback, name):
    fused_cls, _, kwargs, _ = CONFIGS[name]
    targets = _targets(MIXED)
    straight = _params(MIXED, "npu")
    _run(fused_cls(straight, **kwargs), straight, targets, range(20))

    params = _params(MIXED, "npu")
    opt = fused_cls(params, **kwargs)
    _run(opt, params, targets, range(10))
    # each load gets its own copy: optimizers step the state tensors they are given, as torch.optim does
    saved_state = copy.deepcopy(opt.state_dict())
    saved_params = [p.detach().clone() for p in params]
    # a fresh optimizer over the same parameters, loaded before its first step
    fresh = fused_cls(params, **kwargs)
    fresh.load_state_dict(copy.deepcopy(saved_state))
    # ... and the first optimizer, loaded after it has stepped (its buffers are combined already)
    _run(opt, params, targets, range(10, 12))
    with torch.no_grad():
        for p, s in zip(params, saved_params):
            p.copy_(s)
    opt.load_state_dict(saved_state)
    _run(opt, params, targets, range(10, 20))
    for p, s in zip(straight, params):
        torch.testing.assert_close(p.detach().cpu(), s.detach().cpu(), rtol=0, atol=0)
    # the state the optimizer reports is the state its kernels update
    state_name = "momentum_buffer" if "sgd" in name else "exp_avg_sq"
    combined = [parts[state_name] for parts in opt.combined_param_states_indexed_by_group[0] if parts]
    by_dtype = {}
    for t in _state_tensors(opt, state_name):
        by_dtype.setdefault(t.dtype, []).append(t)
    for buffer in combined:
        assert is_combined_tensor_valid(buffer, by_dtype[buffer.dtype])

    with torch.no_grad():
        for p, s in zip(params, saved_params):
            p.copy_(s)
    _run(fresh, params, targets, range(10, 20))
    for p, s in zip(straight, params):
        torch.testing.assert_close(p.detach().cpu(), s.detach().cpu(), rtol=0, atol=0)


def test_zero_grad_combined_and_api():
    params = _params(MIXED, "npu")
    opt = NpuFusedAdamW(params)
    with pytest.raises(ValueError, match="set_to_none(.|\n)*ERR00007"):
        opt.zero_grad(set_to_none=True)
    _run(opt, params, _targets(MIXED), range(2))
    grads = [p.grad for p in params]
    combined_params, combined_grads = opt.get_combined_params(), opt.get_combined_grads()
    assert [g is None for g in combined_grads] == [False, False, True]  # float32, float16, no bfloat16
    assert is_combined_tensor_valid(combined_params[0], params[0::2])
    assert is_combined_tensor_valid(combined_grads[1], grads[1::2])
    opt.zero_grad()
    assert all(p.grad is g and not g.cpu().any() for p, g in zip(params, grads))


@pytest.mark.parametrize("norm_type", [2.0, math.inf])
def test_clip_grad_norm_fused_matches_torch(no_fallback, norm_type):
    params, reference = _params([torch.float32] * 4, "npu"), _params([torch.float32] * 4, "cpu")
    targets = _targets([torch.float32] * 4)
    opt = NpuFusedSGD(params, lr=0.1)
    opt.zero_grad()
    _backward(params, targets, 0)
    _backward(reference, targets, 0)
    norm = opt.clip_grad_norm_fused_(1.5, norm_type)
    expected = torch.nn.utils.clip_grad_norm_(reference, 1.5, norm_type)
    torch.testing.assert_close(norm.cpu(), expected)
    for p, r in zip(params, reference):
        torch.testing.assert_close(p.grad.cpu(), r.grad)


def test_bad_arguments_raise_with_codes():
    params = _params([torch.float32], "npu")
    with pytest.raises(ValueError, match="Invalid learning rate(.|\n)*ERR00003"):
        NpuFusedAdam(params, lr=-1.0)
    with pytest.raises(ValueError, match="Nesterov(.|\n)*ERR00003"):
        NpuFusedSGD(params, lr=0.1, nesterov=True)
    ints = [torch.nn.Parameter(torch.ones(3, device="npu", dtype=torch.float64))]
    opt = NpuFusedSGD(ints, lr=0.1)
    ints[0].grad = torch.ones(3, device="npu", dtype=torch.float64)
    with pytest.raises(TypeError, match="float32, float16 or bfloat16(.|\n)*ERR00002"):
        opt.step()


def _rmsprop_tf_reference(params, targets, steps, lr, alpha, eps, momentum, weight_decay):
    """TensorFlow's RMSprop (torch_npu's NpuFusedRMSpropTF), coupled decay, lr in momentum, on CPU."""
    square_avg = [torch.ones_like(p) for p in params]
    bufs = [torch.zeros_like(p) for p in params]
    for step in steps:
        for p in params:
            p.grad = None
        _backward(params, targets, step)
        with torch.no_grad():
            for p, sq, buf in zip(params, square_avg, bufs):
                g = p.grad + weight_decay * p
                sq.add_((g * g - sq) * (1 - alpha))
                buf.mul_(momentum).add_(lr * g / (sq + eps).sqrt())
                p.sub_(buf)


def test_rmsprop_tf_matches_its_formula(no_fallback):
    fp32 = [torch.float32] * 4
    targets = _targets(fp32)
    npu_params, cpu_params = _params(fp32, "npu"), _params(fp32, "cpu")
    kwargs = dict(lr=0.01, alpha=0.9, eps=1e-10, momentum=0.9, weight_decay=0.01)
    _run(NpuFusedRMSpropTF(npu_params, **kwargs), npu_params, targets, range(20))
    _rmsprop_tf_reference(cpu_params, targets, range(20), **kwargs)
    for p, r in zip(npu_params, cpu_params):
        torch.testing.assert_close(p.detach().cpu(), r.detach(), rtol=1e-3, atol=1e-3)


def _bert_adam_reference(params, targets, steps, lr, t_total, warmup, max_grad_norm, weight_decay,
                         b1=0.9, b2=0.999, e=1e-6):
    """BERT Adam as torch_npu defines it (per-buffer clipping, warmup_linear), on the CPU."""
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    for i, step in enumerate(steps):
        for p in params:
            p.grad = None
        _backward(params, targets, step)
        with torch.no_grad():
            norm = torch.cat([p.grad.flatten() for p in params]).norm()
            coef = min(1.0, max_grad_norm / (norm.item() + 1e-6))
            x = i / t_total
            scheduled = lr * (x / warmup if x < warmup else max((x - 1.0) / (warmup - 1.0), 0.0))
            for p, m_, v_ in zip(params, m, v):
                g = p.grad * coef
                m_.mul_(b1).add_(g, alpha=1 - b1)
                v_.mul_(b2).addcmul_(g, g, value=1 - b2)
                p.sub_(scheduled * (m_ / (v_.sqrt() + e) + weight_decay * p))


def test_bert_adam_matches_its_formula(no_fallback):
    fp32 = [torch.float32] * 4
    targets = _targets(fp32)
    npu_params, cpu_params = _params(fp32, "npu"), _params(fp32, "cpu")
    kwargs = dict(lr=0.05, t_total=20, warmup=0.1, max_grad_norm=1.0, weight_decay=0.01)
    _run(NpuFusedBertAdam(npu_params, **kwargs), npu_params, targets, range(20))
    _bert_adam_reference(cpu_params, targets, range(20), **kwargs)
    for p, r in zip(npu_params, cpu_params):
        torch.testing.assert_close(p.detach().cpu(), r.detach(), rtol=1e-3, atol=1e-3)


def _lamb_reference(params, targets, steps, lr, weight_decay, b1=0.9, b2=0.999, eps=1e-6):
    """LAMB as torch_npu defines it (no bias correction, trust ratio clamp(||p||, 0, 10) / ||step||), on the CPU."""
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    for step in steps:
        for p in params:
            p.grad = None
        _backward(params, targets, step)
        with torch.no_grad():
            for p, m_, v_ in zip(params, m, v):
                m_.mul_(b1).add_(p.grad, alpha=1 - b1)
                v_.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
                adam_step = m_ / (v_.sqrt() + eps) + weight_decay * p
                w, a = p.norm().clamp(0, 10), adam_step.norm()
                trust = 1.0 if w == 0 or a == 0 else w / a
                p.sub_(lr * trust * adam_step)


def test_lamb_matches_its_formula(no_fallback):
    fp32 = [torch.float32] * 4
    targets = _targets(fp32)
    npu_params, cpu_params = _params(fp32, "npu"), _params(fp32, "cpu")
    _run(NpuFusedLamb(npu_params, lr=0.01, weight_decay=0.01), npu_params, targets, range(20))
    _lamb_reference(cpu_params, targets, range(20), lr=0.01, weight_decay=0.01)
    for p, r in zip(npu_params, cpu_params):
        torch.testing.assert_close(p.detach().cpu(), r.detach(), rtol=1e-3, atol=1e-3)


def _adamp_reference(params, targets, steps, lr, betas, eps, weight_decay, delta, wd_ratio, nesterov):
    """AdamP as clovaai/AdamP (and torch_npu) define it, per parameter with host branches, on the CPU.

    Returns how many (step, parameter) updates took the projection, so a test can show it ran.
    """
    beta1, beta2 = betas
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    projected = 0

    def cosine(x, y, view):
        x, y = view(x), view(y)
        return (x * y).sum(dim=1).abs() / (x.norm(dim=1) + eps) / (y.norm(dim=1) + eps)

    for i, step in enumerate(steps, start=1):
        for p in params:
            p.grad = None
        _backward(params, targets, step)
        with torch.no_grad():
            for p, m_, v_ in zip(params, m, v):
                g = p.grad
                m_.mul_(beta1).add_(g, alpha=1 - beta1)
                v_.mul_(beta2).addcmul_(g, g, value=1 - beta2)
                denom = (v_.sqrt() / math.sqrt(1 - beta2 ** i)).add_(eps)
                perturb = (beta1 * m_ + (1 - beta1) * g) / denom if nesterov else m_ / denom
                ratio = 1.0
                if p.dim() > 1:
                    expand = [-1] + [1] * (p.dim() - 1)
                    for view in (lambda x: x.reshape(x.size(0), -1), lambda x: x.reshape(1, -1)):
                        if cosine(g, p, view).max() < delta / math.sqrt(view(p).size(1)):
                            p_n = p / view(p).norm(dim=1).view(expand).add(eps)
                            perturb = perturb - p_n * view(p_n * perturb).sum(dim=1).view(expand)
                            ratio = wd_ratio
                            projected += 1
                            break
                if weight_decay > 0:
                    p.mul_(1 - lr * weight_decay * ratio)
                p.sub_(perturb, alpha=lr / (1 - beta1 ** i))
    return projected


@pytest.mark.parametrize("kwargs", [dict(lr=0.01, weight_decay=0.01),
                                    dict(lr=0.01, weight_decay=0.1, delta=2.0, wd_ratio=0.5, nesterov=True)],
                         ids=["defaults", "projected_nesterov"])
def test_adamp_matches_its_formula(no_fallback, kwargs):
    from torch_npu.optim import NpuFusedAdamP

    fp32 = [torch.float32] * 4
    targets = _targets(fp32)
    npu_params, cpu_params = _params(fp32, "npu"), _params(fp32, "cpu")
    opt = NpuFusedAdamP(npu_params, **kwargs)
    _run(opt, npu_params, targets, range(20))
    group = {k: v for k, v in opt.param_groups[0].items() if k != "params"}
    projected = _adamp_reference(cpu_params, targets, range(20), **group)
    if kwargs.get("delta", 0.1) > 1.0:
        assert projected > 0, "the reference never took the projection: the test would not cover it"
    for p, r in zip(npu_params, cpu_params):
        torch.testing.assert_close(p.detach().cpu(), r.detach(), rtol=1e-3, atol=1e-3)
    assert is_combined_tensor_valid(opt.get_combined_params()[0], npu_params)


def test_adamp_signature_and_mixed_dtypes(no_fallback):
    import inspect

    from torch_npu.optim import NpuFusedAdamP

    defaults = {k: v.default for k, v in inspect.signature(NpuFusedAdamP).parameters.items() if k != "params"}
    assert defaults == dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, delta=0.1, wd_ratio=0.1,
                            nesterov=False)
    # float32 and float16 parameters in one optimizer, against the formula run in float32 on the CPU: the
    # float32 parameters must match to 1e-3; the float16 ones carry float16 storage rounding.
    targets = _targets(MIXED)
    npu_params = _params(MIXED, "npu")
    cpu_params = [torch.nn.Parameter(p.detach().float()) for p in _params(MIXED, "cpu")]
    _run(NpuFusedAdamP(npu_params, lr=0.01, weight_decay=0.01, delta=2.0), npu_params, targets, range(20))
    _adamp_reference(cpu_params, [t.float() for t in targets], range(20), lr=0.01, betas=(0.9, 0.999), eps=1e-8,
                     weight_decay=0.01, delta=2.0, wd_ratio=0.1, nesterov=False)
    for p, r in zip(npu_params, cpu_params):
        tol = 1e-3 if p.dtype == torch.float32 else 4e-3
        torch.testing.assert_close(p.detach().cpu().float(), r.detach(), rtol=tol, atol=tol)
    # the moments and the update: one in-place launch per dtype buffer per step each (no copy back)
    stats = no_fallback()
    assert stats["npu::_npu_fused_adamp_moments"]["compiled"] == stats["npu::_npu_fused_adamp_update"]["compiled"] == 40
    with pytest.raises(ValueError, match="ERR00003"):
        NpuFusedAdamP(npu_params, delta=-1.0)


def test_adamp_bfloat16_parameters(no_fallback):
    from torch_npu.optim import NpuFusedAdamP

    bf16 = [torch.bfloat16] * 4
    targets = _targets(bf16)
    npu_params = _params(bf16, "npu")
    cpu_params = [torch.nn.Parameter(p.detach().float()) for p in _params(bf16, "cpu")]
    opt = NpuFusedAdamP(npu_params, lr=0.01, weight_decay=0.01, delta=2.0)
    _run(opt, npu_params, targets, range(20))
    _adamp_reference(cpu_params, [t.float() for t in targets], range(20), lr=0.01, betas=(0.9, 0.999), eps=1e-8,
                     weight_decay=0.01, delta=2.0, wd_ratio=0.1, nesterov=False)
    for p, r in zip(npu_params, cpu_params):
        assert p.dtype == torch.bfloat16 and opt.state[p]["exp_avg"].dtype == torch.bfloat16
        torch.testing.assert_close(p.detach().float().cpu(), r.detach(), rtol=3e-2, atol=3e-2)
