"""End-to-end demo: train a small MLP on the (simulated) NPU.

Run with ``make demo``. Prints the device, the loss per step, the allocator summary
and how many calls each op sent through the CPU fallback.
"""

import warnings

import torch
import torch.nn.functional as F

import torch_npu


def make_data(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Two-class spirals: a task a 2-layer MLP learns in a few dozen steps."""
    t = torch.linspace(0.0, 3.0, n // 2)
    arm = torch.stack([t * torch.cos(2.5 * t), t * torch.sin(2.5 * t)], dim=1)
    x = torch.cat([arm, -arm]) + 0.05 * torch.randn(n, 2)
    y = torch.cat([torch.zeros(n // 2, dtype=torch.long), torch.ones(n // 2, dtype=torch.long)])
    return x, y


def main() -> None:
    torch.manual_seed(0)
    props = torch.npu.get_device_properties(0)
    print(f"torch {torch.__version__}, {torch.npu.device_count()} NPUs visible, using npu:0")
    print(f"device properties: {props}")
    print(
        "NOTE: tensors live in NPU memory; copies, fills, views and random ops are native NPU tasks.\n"
        "      Arithmetic runs as kernels of the eager compiler where it supports the op, and through\n"
        "      the CPU fallback (zero-copy, on the host) everywhere else: the counters below say which.\n"
        "      The first run compiles each kernel (slow); later runs load them from the kernel cache."
    )

    x, y = make_data(512)
    x, y = x.npu(), y.npu()
    model = torch.nn.Sequential(
        torch.nn.Linear(2, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 2)
    ).npu()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)

    start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)
    start.record()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one fallback warning per op: summarised below instead
        for step in range(1, 61):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            if step % 10 == 0:
                acc = (model(x).argmax(dim=1) == y).float().mean()
                print(f"step {step:3d}  loss {loss.item():.4f}  accuracy {acc.item():.3f}")
    end.record()
    end.synchronize()
    print(f"training took {start.elapsed_time(end):.1f} ms (NPU events)")

    print(torch.npu.memory_summary(abbreviated=True))
    compiled = {op: row["compiled"] for op, row in torch.npu.eager_stats().items() if row["compiled"]}
    print(f"eager compiler: {sum(compiled.values())} calls over {len(compiled)} ops ran as compiled NPU kernels")
    counts = torch_npu._C._fallback_counts()
    print(f"CPU fallback: {sum(counts.values())} calls over {len(counts)} ops ran on the host:")
    for op, n in sorted(counts.items(), key=lambda kv: -kv[1])[:12]:
        print(f"  {n:6d}  {op}")


if __name__ == "__main__":
    main()
