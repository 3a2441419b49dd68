"""Training parity: 20 SGD steps of a small CNN and a small GPT on npu give the CPU's losses, with
every op on compiled kernels (zero CPU fallback calls)."""

from __future__ import annotations

import copy

import pytest
import torch

from conftest import assert_no_fallback
from training_models import cnn_setup, gpt_setup, train

STEPS = 20


@pytest.mark.parametrize("setup", [cnn_setup, gpt_setup], ids=["cnn", "gpt"])
def test_losses_match_cpu(setup, eager_stats):
    model, loss_fn, _, _ = setup()
    cpu = train(copy.deepcopy(model), loss_fn, "cpu", STEPS)
    npu_model = copy.deepcopy(model)
    npu = train(npu_model, loss_fn, "npu", STEPS)
    assert_no_fallback()
    # Float32 rounding differs per kernel (tiling, fused reductions); it compounds over steps.
    torch.testing.assert_close(torch.tensor(npu), torch.tensor(cpu), rtol=2e-4, atol=2e-4)
    assert cpu[-1] < cpu[0] * 0.9, "the model must actually learn for the comparison to mean something"
    for (name, p_cpu), p_npu in zip(model.named_parameters(), npu_model.parameters()):
        assert p_npu.device.type == "npu", name


def test_adamw_steps_compile_once(eager_stats):
    # AdamW's addcdiv value (-lr / bias correction) changes every step: it is a kernel parameter,
    # so steps after the first compile nothing, and the parameters stay bit-identical to the CPU's.
    torch.manual_seed(0)
    weights = [torch.randn(7, 5), torch.randn(5)]
    grads = [torch.randn(7, 5), torch.randn(5)]
    params = {}
    for device in ("cpu", "npu"):
        ps = [w.clone().to(device).requires_grad_() for w in weights]
        optimizer = torch.optim.AdamW(ps, lr=1e-2)
        for step in range(4):
            if step == 1:
                misses = sum(row["misses"] for row in eager_stats().values())
            for p, g in zip(ps, grads):
                p.grad = g.to(device) * (step + 1)
            optimizer.step()
        params[device] = ps
    assert sum(row["misses"] for row in eager_stats().values()) == misses
    assert_no_fallback()
    for p_npu, p_cpu in zip(params["npu"], params["cpu"]):
        torch.testing.assert_close(p_npu.detach().cpu(), p_cpu.detach(), rtol=0, atol=0)
