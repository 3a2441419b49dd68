"""A small model trained under autocast + GradScaler on the NPU tracks its float32 training, compiled."""

from __future__ import annotations

import pytest
import torch


def _losses(dtype: torch.dtype | None, steps: int = 12) -> list[float]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).npu()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, foreach=False)
    scaler = torch.npu.amp.GradScaler(init_scale=2.0**12, enabled=dtype is not None)
    x = torch.randn(64, 16).npu()
    y = torch.randn(64, 4).npu()
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        with torch.autocast("npu", dtype=dtype or torch.float16, enabled=dtype is not None):
            out = model(x)
            loss = (out.float() - y).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_autocast_training_tracks_float32(no_fallback, dtype):
    reference = _losses(None)
    mixed = _losses(dtype)
    assert mixed[-1] < 0.8 * mixed[0], f"no training progress: {mixed}"
    tolerance = 1e-2 if dtype == torch.float16 else 4e-2
    torch.testing.assert_close(torch.tensor(mixed), torch.tensor(reference), rtol=tolerance, atol=tolerance)
