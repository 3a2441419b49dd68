"""One SGD training step of the small CNN and the small GPT: npu eager vs torch CPU eager.

The models are those of test/py/eager/test_training_parity.py. Warm-up steps fill the kernel cache
(a cold run compiles every kernel first), then the median of timed steps is reported for each
device, each step ending in a synchronizing loss.item(). Also prints how many calls per step ran
compiled kernels, views, or the CPU fallback.
"""

from __future__ import annotations

import copy
import statistics
import sys
import time
from pathlib import Path

import torch

import torch_npu  # noqa: F401

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test" / "py" / "eager"))
from training_models import cnn_setup, gpt_setup, train  # noqa: E402

WARMUP, TIMED = 3, 10


def step_ms(model: torch.nn.Module, loss_fn, device: str) -> float:
    model = copy.deepcopy(model)
    train(model, loss_fn, device, WARMUP)
    times = []
    for _ in range(TIMED):
        start = time.perf_counter()
        train(model, loss_fn, device, 1)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main() -> int:
    for name, setup in (("cnn", cnn_setup), ("gpt", gpt_setup)):
        model, loss_fn, _, _ = setup()
        cpu = step_ms(model, loss_fn, "cpu")
        npu = step_ms(model, loss_fn, "npu")
        torch.npu.reset_eager_stats()
        train(copy.deepcopy(model), loss_fn, "npu", 1)
        stats = torch.npu.eager_stats().values()
        paths = {p: sum(row.get(p, 0) for row in stats) for p in ("compiled", "view", "fallback")}
        print(f"{name}: one training step  npu eager {npu:8.2f} ms   torch CPU eager {cpu:8.2f} ms   "
              f"ratio {npu / cpu:5.2f}x   calls per step {paths}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
