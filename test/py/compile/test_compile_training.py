"""torch.compile(backend="npu-mlir") trains as eager does: outputs, gradients and parameters over 10
steps, with every graph compiled whole (no split) and replayed by C++: an MLP and a GPT-style block
(causal self-attention + MLP, pre-LayerNorm). The reference is eager on the CPU (eager npu is held to
the CPU by the op tests; a CPU reference costs no eager npu compiles). And the warm start: a second process compiling the MLP
loads both graphs from the kernel cache (no compile worker), finding the backend through its entry
point without importing torch_npu first."""

import copy
import json
import os
import subprocess
import sys

import torch

import torch_npu  # noqa: F401

STEPS = 10


def _mlp() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 8), torch.nn.Tanh(),
                               torch.nn.Linear(8, 4))


class _Block(torch.nn.Module):
    def __init__(self, width: int = 32, heads: int = 2) -> None:
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(width), torch.nn.LayerNorm(width)
        self.attn = torch.nn.MultiheadAttention(width, heads, batch_first=True)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(),
                                       torch.nn.Linear(4 * width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.ln1(x)
        causal = torch.triu(torch.ones(x.shape[1], x.shape[1], dtype=torch.bool, device=x.device), 1)
        x = x + self.attn(h, h, h, attn_mask=causal, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


def _train(model: torch.nn.Module, run, batches) -> list:
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    trace = []
    for x, y in batches:
        opt.zero_grad()
        out = run(x)
        loss = torch.nn.functional.mse_loss(out, y)
        loss.backward()
        trace.append((out.detach().cpu(), [p.grad.detach().cpu() for p in model.parameters()]))
        opt.step()
    trace.append([p.detach().cpu() for p in model.parameters()])
    return trace


def _npu(batches: list) -> list:
    return [(x.npu(), y.npu()) for x, y in batches]


def _assert_same(compiled: list, eager: list) -> None:
    for (out_c, grads_c), (out_e, grads_e) in zip(compiled[:-1], eager[:-1]):
        torch.testing.assert_close(out_c, out_e, rtol=1e-4, atol=1e-5)
        for gc, ge in zip(grads_c, grads_e):
            torch.testing.assert_close(gc, ge, rtol=1e-4, atol=1e-5)
    for pc, pe in zip(compiled[-1], eager[-1]):
        torch.testing.assert_close(pc, pe, rtol=1e-4, atol=1e-5)


def test_mlp_trains_as_eager(compile_stats):
    torch.manual_seed(0)
    reference = _mlp()
    model = copy.deepcopy(reference).npu()
    batches = [(torch.randn(8, 16), torch.randn(8, 4)) for _ in range(STEPS)]
    compiled = torch.compile(model, backend="npu-mlir")
    _assert_same(_train(model, compiled, _npu(batches)), _train(reference, reference, batches))
    stats = compile_stats()
    assert stats["forward_graphs"] == 1 and stats["backward_graphs"] == 1, stats
    assert stats["graphs_compiled"] == 2 and stats["split_nodes"] == {}, stats
    assert stats["kernels"] >= 2 and stats["recompiles"] == 0, stats


def test_gpt_block_trains_as_eager(compile_stats):
    torch.manual_seed(0)
    reference = _Block()
    model = copy.deepcopy(reference).npu()
    batches = [(torch.randn(2, 8, 32), torch.randn(2, 8, 32)) for _ in range(STEPS)]
    compiled = torch.compile(model, backend="npu-mlir")
    _assert_same(_train(model, compiled, _npu(batches)), _train(reference, reference, batches))
    stats = compile_stats()
    assert stats["forward_graphs"] == 1 and stats["backward_graphs"] == 1 and stats["split_nodes"] == {}, stats
    # Intermediates whose lives do not overlap share the arena's bytes (and the steps above still match).
    assert 0 < stats["arena_bytes"] < stats["temp_bytes"] / 2, stats


# Dynamo loads the backend's entry point, which imports the package: no `import torch_npu` before it.
WARM = f"""
import json, sys, torch
from torch._dynamo.backends.registry import list_backends, lookup_backend
backend = lookup_backend("npu-mlir")
import torch_npu, torch_npu.dynamo.backend
assert backend is torch_npu.dynamo.backend.npu_mlir and list_backends().count("npu-mlir") == 1
sys.path.insert(0, {os.path.dirname(__file__)!r})
from test_compile_training import _mlp
torch.compile(_mlp().npu(), backend="npu-mlir")(torch.randn(8, 16).npu()).sum().backward()
print(json.dumps(torch.npu.compile_stats()))
"""


def test_second_process_loads_compiled_graphs_from_the_cache(compile_stats):
    # The MLP's graphs (test_mlp_trains_as_eager compiled them already when it ran first).
    torch.compile(_mlp().npu(), backend="npu-mlir")(torch.randn(8, 16).npu()).sum().backward()
    out = subprocess.run([sys.executable, "-c", WARM], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ))
    stats = json.loads(out.stdout.strip().splitlines()[-1])
    assert stats["cache_hits"] == 2 and stats["cache_misses"] == 0 and stats["compile_ms"] == 0, stats
