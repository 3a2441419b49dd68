"""Where a steady npu training step of bench_models' models goes: per aten op, host and device time.

For each model: three AdamW steps warm the kernel caches, then one step runs under torch.profiler
(CPU + NPU activities). Each top-level aten op of the step (one with no aten op above it: autograd
and optimizer ops included) is grouped by name and input shapes; the table gives its calls, the host
time spent inside it (dispatch, key building, launches, views), the device time of the kernels it
launched (simulated time on the stream worker) and how many kernels and host<->device copies that was.
The step's own totals and its synchronizing runtime calls close each report. The device runs
asynchronously, so a step costs about max(host, device) plus whatever a synchronization waits for.

Usage: python bench/profile_models.py [model ...] [--top N]   (models as in bench_models; default all)
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

import torch_npu  # noqa: F401

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_models  # noqa: E402  (its model builders and library install)

WARMUP_STEPS = 3


@dataclass
class OpRow:
    calls: int = 0
    host_us: float = 0.0
    device_us: float = 0.0
    kernels: int = 0
    copies: int = 0


def _descendants(event):
    for child in event.cpu_children:
        yield child
        yield from _descendants(child)


def _device_records(event):
    """The device-side records (kernels, copies) the event or any op inside it queued."""
    for e in (event, *_descendants(event)):
        yield from e.kernels


def profile_step(name: str, top: int) -> None:
    torch.manual_seed(0)
    model, batch, loss_fn = bench_models.MODELS[name]()
    trainer = bench_models.Trainer(model, batch, loss_fn, "npu")
    for _ in range(WARMUP_STEPS):
        trainer.step()
    torch.npu.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.NPU], record_shapes=True) as prof:
        start = time.perf_counter()
        trainer.step()  # ends in loss.item(): the step's own synchronization
        wall_ms = (time.perf_counter() - start) * 1e3
    events = prof.events()
    device = [e for e in events if e.device_type == DeviceType.PrivateUse1]
    rows: dict[tuple[str, str], OpRow] = defaultdict(OpRow)
    for e in events:
        if e.device_type != DeviceType.CPU or not e.name.startswith("aten::"):
            continue
        parent, nested = e.cpu_parent, False
        while parent is not None:
            nested |= parent.name.startswith("aten::")
            parent = parent.cpu_parent
        if nested:
            continue
        row = rows[(e.name, str(e.input_shapes)[:60])]
        row.calls += 1
        row.host_us += e.cpu_time_total
        row.device_us += e.device_time_total
        launched = list(_device_records(e))
        row.kernels += sum(1 for k in launched if not k.name.startswith("Memcpy"))
        row.copies += sum(1 for k in launched if k.name.startswith("Memcpy"))
    host_us = sum(r.host_us for r in rows.values())
    device_us = sum(e.self_device_time_total for e in device) or sum(r.device_us for r in rows.values())
    syncs = [e for e in events if e.device_type == DeviceType.CPU and "Synchronize" in e.name]
    print(f"{name}: one steady step {wall_ms:.1f} ms wall; aten ops {host_us / 1e3:.1f} ms host, "
          f"kernels and copies {device_us / 1e3:.1f} ms device, {len(device)} device records, "
          f"{len(syncs)} synchronizing runtime calls")
    print(f"  {'device ms':>9} {'host ms':>8} {'calls':>5} {'kernels':>7} {'copies':>6}  op [input shapes]")
    for (op, shapes), row in sorted(rows.items(), key=lambda kv: -(kv[1].device_us + kv[1].host_us))[:top]:
        print(f"  {row.device_us / 1e3:9.2f} {row.host_us / 1e3:8.2f} {row.calls:5d} {row.kernels:7d} "
              f"{row.copies:6d}  {op} {shapes}")


def main(argv: list[str]) -> int:
    top = int(argv[argv.index("--top") + 1]) if "--top" in argv else 15
    names = [a for a in argv if not a.startswith("--") and not a.isdigit()] or list(bench_models.MODELS)
    unknown = [n for n in names if n not in bench_models.MODELS]
    if unknown:
        print(f"unknown model(s) {unknown}; choose from {list(bench_models.MODELS)}", file=sys.stderr)
        return 2
    bench_models.import_libraries()
    for name in names:
        profile_step(name, top)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
