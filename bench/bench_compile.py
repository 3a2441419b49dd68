"""torch.compile(backend="npu-mlir") against npu eager and Inductor on CPU tensors, one run, same threads.

For a GPT-style block and a CNN with BatchNorm: the training step (forward, backward, SGD step) in ms,
median over --steps after warm-up, under npu-mlir, npu eager and Inductor (CPU); the first call (trace
+ compile + run) of npu-mlir against Inductor's, each in a fresh process with an empty cache; and
npu-mlir's warm start: a second fresh process on the cache the first one filled. The kernel cache is
keyed by a hash of every compiler source file, so an edit under compiler/npu_mlir/ between the two
runs (a shared checkout) makes the warm run compile again: the line says so when it saw misses.

Usage: python bench/bench_compile.py [--steps N] [--models gpt_block cnn_bn]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

MODELS = """
import torch
class Block(torch.nn.Module):
    def __init__(self, d=64, heads=4):
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.attn = torch.nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(), torch.nn.Linear(4 * d, d))
    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))
def make(name):
    torch.manual_seed(0)
    if name == "gpt_block":
        return Block(), torch.randn(4, 32, 64)
    cnn = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
                              torch.nn.Conv2d(16, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
                              torch.nn.Flatten(), torch.nn.Linear(16 * 16 * 16, 10))
    return cnn, torch.randn(8, 3, 16, 16)
"""

RUN = MODELS + """
import json, sys, time, statistics
name, mode, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
model, x = make(name)
if mode != "inductor":
    import torch_npu
    model, x = model.npu(), x.npu()
sync = torch.npu.synchronize if mode != "inductor" else (lambda: None)
run = model if mode == "eager" else torch.compile(model, backend="npu-mlir" if mode == "npu-mlir" else "inductor", dynamic=False)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
def step():
    opt.zero_grad()
    run(x).float().pow(2).mean().backward()
    opt.step()
start = time.perf_counter(); step(); sync(); first = time.perf_counter() - start
for _ in range(2): step()
sync(); times = []
for _ in range(steps):
    start = time.perf_counter(); step(); sync(); times.append(time.perf_counter() - start)
misses = torch.npu.compile_stats()["cache_misses"] if mode == "npu-mlir" else 0
print(json.dumps({"first_s": first, "step_ms": statistics.median(times) * 1e3, "misses": misses}))
"""


def _run(name: str, mode: str, steps: int, env: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", RUN, name, mode, str(steps)], capture_output=True, text=True,
                         env=env, timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(f"{name} {mode} failed: {out.stderr[-1500:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--models", nargs="+", default=["gpt_block", "cnn_bn"], choices=["gpt_block", "cnn_bn"])
    args = parser.parse_args()
    threads = os.environ.get("OMP_NUM_THREADS", str(os.cpu_count()))
    print(f"bench_compile: training step (fwd+bwd+SGD), median of {args.steps}; {threads} threads for every peer")
    for name in args.models:
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, TORCH_NPU_KERNEL_CACHE=cache, TORCHINDUCTOR_CACHE_DIR=os.path.join(cache, "ind"),
                       OMP_NUM_THREADS=threads)
            cold = _run(name, "npu-mlir", args.steps, env)
            warm = _run(name, "npu-mlir", args.steps, env)
            eager = _run(name, "eager", args.steps, env)
            inductor = _run(name, "inductor", args.steps, env)
        print(f"{name:10s} step ms: npu-mlir {cold['step_ms']:8.2f}  npu eager {eager['step_ms']:8.2f} "
              f"({eager['step_ms'] / cold['step_ms']:.2f}x)  inductor-cpu {inductor['step_ms']:8.2f} "
              f"({inductor['step_ms'] / cold['step_ms']:.2f}x)")
        print(f"{name:10s} first call s: npu-mlir cold {cold['first_s']:6.2f}  inductor cold {inductor['first_s']:6.2f} "
              f"({inductor['first_s'] / cold['first_s']:.2f}x)  npu-mlir warm start {warm['first_s']:6.2f} "
              f"({warm['first_s'] / cold['first_s'] * 100:.0f}% of cold, {warm['misses']} cache misses)")


if __name__ == "__main__":
    main()
