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
