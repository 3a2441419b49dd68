"""Optimizer steps on npu match CPU and run compiled: their in-place updates (lerp_, addcmul_,
addcdiv_) reach the dispatcher as out= variants."""

from __future__ import annotations

import pytest
import torch

from conftest import assert_no_fallback


@pytest.mark.parametrize("optimizer", [torch.optim.Adam, torch.optim.AdamW])
def test_step_matches_cpu_without_fallback(eager_stats, optimizer):
    torch.manual_seed(0)
    cpu_model = torch.nn.Linear(8, 4)
    npu_model = torch.nn.Linear(8, 4).npu()
    npu_model.load_state_dict(cpu_model.state_dict())
    x = torch.randn(16, 8)
    for model, xs in ((cpu_model, x), (npu_model, x.npu())):
        opt = optimizer(model.parameters(), lr=0.01, foreach=False)
        for _ in range(5):
            opt.zero_grad()
            model(xs).square().mean().backward()
            opt.step()
    for p_cpu, p_npu in zip(cpu_model.parameters(), npu_model.parameters()):
        torch.testing.assert_close(p_npu.cpu(), p_cpu, rtol=1e-5, atol=1e-6)
    assert_no_fallback()
