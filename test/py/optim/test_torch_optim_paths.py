"""torch.optim on npu parameters: the foreach path (torch's default for PrivateUse1) and fused=True
(npu _fused_adam_ / _fused_adamw_ / _fused_sgd_) match the for-loop path on the CPU, compiled; fused
steps honour GradScaler's grad_scale / found_inf."""

from __future__ import annotations

import pytest
import torch

OPTIMIZERS = {
    "adam": (torch.optim.Adam, dict(lr=0.01, weight_decay=0.01)),
    "adam_amsgrad": (torch.optim.Adam, dict(lr=0.01, amsgrad=True)),
    "adamw": (torch.optim.AdamW, dict(lr=0.01)),
    "sgd_momentum": (torch.optim.SGD, dict(lr=0.05, momentum=0.9, nesterov=True)),
}


def _params(device: str) -> list[torch.nn.Parameter]:
    gen = torch.Generator().manual_seed(0)
    return [torch.nn.Parameter(torch.randn(shape, generator=gen).to(device)) for shape in ((8, 6), (6,), (3, 8))]


def _run(params, optimizer, steps: int = 8) -> None:
    for step in range(steps):
        optimizer.zero_grad()
        sum((p * p * (1.0 + 0.1 * step)).sum() for p in params).backward()
        optimizer.step()


@pytest.mark.parametrize("path", ["foreach", "fused"])
@pytest.mark.parametrize("name", OPTIMIZERS)
def test_path_matches_cpu_for_loop(no_fallback, name, path):
    cls, kwargs = OPTIMIZERS[name]
    npu_params, cpu_params = _params("npu"), _params("cpu")
    optimizer = cls(npu_params, **{path: True}, **kwargs)
    _run(npu_params, optimizer, steps=7)
    _run(cpu_params, cls(cpu_params, foreach=False, **kwargs))
    # The eighth step alone: every launch it makes is a multi-tensor one (one per op for the three
    # parameters), none per tensor.
    optimizer.zero_grad()
    sum((p * p * 1.7).sum() for p in npu_params).backward()
    assert not any(row["fallback"] for row in no_fallback().values())  # the counters restart here
    torch.npu.reset_eager_stats()
    optimizer.step()
    launched = {op: row["compiled"] for op, row in no_fallback().items() if row["compiled"]}
    assert launched and all(op.startswith(("aten::_foreach_", "aten::_fused_")) for op in launched), launched
    # every launch's kernels were built by the ascend pipeline (none from linalg)
    assert all(no_fallback()[op]["pipeline"] == n for op, n in launched.items()), no_fallback()
    if path == "fused":  # the step itself, and (Adam) the step counts' increment
        expected = {f"aten::_fused_{name.split('_')[0]}_": 1}
        if "adam" in name:
            expected["aten::_foreach_add_.Scalar"] = 1
        assert launched == expected
    for p, r in zip(npu_params, cpu_params):
        torch.testing.assert_close(p.detach().cpu(), r.detach(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["adamw", "sgd_momentum"])
def test_fused_step_with_grad_scaler_skips_inf_and_unscales(no_fallback, name):
    cls, kwargs = OPTIMIZERS[name]
    params, reference = _params("npu"), _params("npu")
    opt = cls(params, fused=True, **kwargs)
    ref_opt = cls(reference, foreach=False, **kwargs)
    scaler = torch.amp.GradScaler("npu", init_scale=256.0)
    for step in range(4):
        opt.zero_grad()
        scaler.scale(sum((p * p).sum() for p in params)).backward()
        if step == 1:
            params[0].grad[0, 0] = float("inf")
        scaler.step(opt)
        scaler.update()
        if step != 1:  # the inf step changes nothing
            ref_opt.zero_grad()
            sum((p * p).sum() for p in reference).backward()
            ref_opt.step()
    assert scaler.get_scale() == 128.0
    for p, r in zip(params, reference):
        torch.testing.assert_close(p.detach().cpu(), r.detach().cpu(), rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(p.grad.cpu(), r.grad.cpu(), rtol=1e-5, atol=1e-6)  # stored unscaled
