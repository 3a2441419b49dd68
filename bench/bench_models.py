"""Real models from the libraries people use, trained on npu and on the CPU in one process.

Models (random init, small configs): Hugging Face transformers Llama and GPT-2 causal LMs,
torchvision ResNet-18, timm ViT. Each trains STEPS AdamW steps from the same weights on npu and on
the CPU; per model the bench prints the largest relative error (norm) of a parameter gradient
after the first backward, the loss of each step on both devices and their largest difference,
the eval-mode loss after training (batch norm uses its running statistics there), the same losses of
the training in float64 on the CPU (the yardstick when npu and CPU float32 differ: see
losses_agree()), the ops that ran on the CPU fallback (there should be none), and the first-step and
steady-state (median of the steps after the second) step time of npu eager against torch CPU eager
on the same threads. The npu and CPU steps alternate, so both see the same host load. The same steps
on one CPU thread are a second peer: on a loaded host torch's OpenMP threads wait for each other
whenever one is descheduled (CPU eager steps 10-100x slower at load 10 than at load 0), one thread
does not. Each step's CPU time (all of the process's threads) is reported too: unlike wall time it
does not grow while a thread waits for a core, so it compares runs made at different loads.

The libraries are bench-only: on first use they are installed with `pip install --no-deps` into
a scratch folder (TORCH_NPU_BENCH_LIBS, default ~/.cache/torch_npu/bench_libs/<pins hash>), never
into the project's environment, and next to the installed torch (no second torch). torchvision's
wheel carries custom ops built against another torch; the models need none of them, so its
`_meta_registrations` module (which registers those ops' meta kernels) is stubbed before import.

Usage: python bench/bench_models.py [model ...]
    model       any of llama, gpt2, resnet18, vit (default: all)
bench/profile_models.py shows where a steady npu step of these models goes (host and device time per op).
"""

from __future__ import annotations

import copy
import hashlib
import os
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Callable

import torch

import torch_npu  # noqa: F401

STEPS = int(os.environ.get("BENCH_MODELS_STEPS", "6"))
LR = 1e-4  # small enough that a few steps on one batch do not drive the loss to ~0 (where rounding dominates)
GRAD_RTOL = 1e-3  # float32 gradients of one backward: summation order differs between the devices
# Losses after several AdamW steps (which normalise each gradient element, so rounding differences in
# near-zero elements grow), relative to max(|cpu loss|, LOSS_FLOOR): near-zero losses compare absolutely.
LOSS_RTOL, LOSS_FLOOR = 1e-2, 0.1
# A loss further than LOSS_RTOL from the CPU's still agrees when it is no further from the same
# training in float64 than the CPU's float32 losses have been by then: the two float32 runs differ by
# rounding that the training amplifies. ResNet-18 here (batch norm over 4 samples at 1x1 in layer4,
# AdamW normalising near-zero gradients) is chaotic: scaling its initial weights by (1 + 1e-7 N(0,1))
# moves its step-4 loss from 0.2837 to 0.2623 on the CPU, and float64 gives 0.2622; every aten op of a
# step, optimizer included, is as close to float64 on npu as on the CPU (checked op by op).
# After a multi-threaded CPU step, torch's OpenMP threads spin-wait for the next parallel region for
# milliseconds, and process_time() counts that against the next step: the npu step that follows
# showed 13-21 ms of CPU time per Llama step where a process training only on npu spends 8-10 ms.
# The steps are spaced out by this much after such a step (it only shifts when steps start).
OPENMP_SPIN_S = 0.05
# The minimal set the model classes import (transformers pulls in the hub client at import time).
PINS = ("transformers==5.24.0", "huggingface-hub==2.4.0", "httpx2==2.16.2", "httpcore2==2.16.2", "h11==0.16.0",
        "idna==3.20", "truststore==0.10.5", "safetensors==0.8.0", "tqdm==4.70.1", "pyyaml==6.0.4",
        "regex==2026.11.19", "torchvision==0.28.0", "pillow==13.0.0", "timm==1.0.31")


def library_dir() -> Path:
    default = Path.home() / ".cache" / "torch_npu" / "bench_libs" / hashlib.sha256(" ".join(PINS).encode()).hexdigest()[:12]
    target = Path(os.environ.get("TORCH_NPU_BENCH_LIBS", str(default)))
    if not (target / ".complete").exists():
        print(f"installing the model libraries into {target} (once)", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target),
                        *PINS], check=True)
        (target / ".complete").touch()
    return target


def import_libraries() -> None:
    sys.path.insert(0, str(library_dir()))
    sys.modules["torchvision._meta_registrations"] = types.ModuleType("torchvision._meta_registrations")


Batch = tuple[torch.Tensor, torch.Tensor]
LossFn = Callable[[torch.nn.Module, Batch], torch.Tensor]


def llama() -> tuple[torch.nn.Module, Batch, LossFn]:
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=512, hidden_size=128, intermediate_size=344, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    tokens = torch.randint(0, config.vocab_size, (2, 64))
    return LlamaForCausalLM(config), (tokens, tokens), lambda m, b: m(input_ids=b[0], labels=b[1]).loss


def gpt2() -> tuple[torch.nn.Module, Batch, LossFn]:
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(vocab_size=512, n_positions=128, n_embd=128, n_layer=2, n_head=4, resid_pdrop=0.0,
                        embd_pdrop=0.0, attn_pdrop=0.0)
    tokens = torch.randint(0, config.vocab_size, (2, 64))
    return GPT2LMHeadModel(config), (tokens, tokens), lambda m, b: m(input_ids=b[0], labels=b[1]).loss


def classify(m: torch.nn.Module, b: Batch) -> torch.Tensor:
    return torch.nn.functional.cross_entropy(m(b[0]), b[1])


def resnet18() -> tuple[torch.nn.Module, Batch, LossFn]:
    from torchvision.models import resnet18 as build

    return build(num_classes=10), (torch.randn(4, 3, 32, 32), torch.randint(0, 10, (4,))), classify


def vit() -> tuple[torch.nn.Module, Batch, LossFn]:
    import timm

    model = timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=32, patch_size=4, depth=4,
                              num_classes=10)
    return model, (torch.randn(4, 3, 32, 32), torch.randint(0, 10, (4,))), classify


MODELS = {"llama": llama, "gpt2": gpt2, "resnet18": resnet18, "vit": vit}


class Trainer:
    """AdamW steps of one model on one device, timed one step at a time (each ends in a
    synchronizing .item()), keeping the gradients of the first backward."""

    def __init__(self, model: torch.nn.Module, batch: Batch, loss_fn: LossFn, device: str,
                 threads: int | None = None) -> None:
        self.model, self.loss_fn, self.device, self.threads = model.to(device).train(), loss_fn, device, threads
        self.batch = tuple(t.to(device) for t in batch)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=LR)
        self.losses: list[float] = []
        self.times: list[float] = []  # ms
        self.cpu_times: list[float] = []  # ms of CPU time, all of the process's threads
        self.first_grads: list[torch.Tensor] = []

    def step(self) -> None:
        threads = torch.get_num_threads()
        torch.set_num_threads(self.threads or threads)
        try:
            self._step()
        finally:
            torch.set_num_threads(threads)

    def _step(self) -> None:
        start, start_cpu = time.perf_counter(), time.process_time()
        self.optimizer.zero_grad()
        loss = self.loss_fn(self.model, self.batch)
        loss.backward()
        if not self.losses:
            self.first_grads = [p.grad.clone() for p in self.model.parameters() if p.grad is not None]
        self.optimizer.step()
        self.losses.append(loss.item())
        self.times.append((time.perf_counter() - start) * 1e3)
        self.cpu_times.append((time.process_time() - start_cpu) * 1e3)


def train_side_by_side(trainers: list[Trainer]) -> None:
    """STEPS steps of each trainer, alternating step by step: on a host other jobs load, both
    devices' steps then see the same load (run one after the other, a CPU eager step at load 8 took
    1093 ms where it took 7 ms at load 0.1 a minute earlier)."""
    for _ in range(STEPS):
        for trainer in trainers:
            trainer.step()
            if trainer.device == "cpu" and (trainer.threads or torch.get_num_threads()) > 1:
                time.sleep(OPENMP_SPIN_S)


def losses_agree(npu: list[float], cpu: list[float], exact: list[float]) -> bool:
    """Each npu float32 loss matches the CPU's, or is no further from float64 than the CPU's float32
    losses have been up to that step."""
    drift = 0.0
    for n, c, e in zip(npu, cpu, exact):
        drift = max(drift, abs(c - e))
        if abs(n - c) / max(abs(c), LOSS_FLOOR) > LOSS_RTOL and abs(n - e) > drift:
            return False
    return True


def eval_loss(model: torch.nn.Module, batch: Batch, loss_fn: LossFn, device: str) -> float:
    with torch.no_grad():
        return loss_fn(model.eval(), tuple(t.to(device) for t in batch)).item()


def bench(name: str) -> bool:
    torch.manual_seed(0)
    model, batch, loss_fn = MODELS[name]()
    npu_model, serial_model, exact_model = copy.deepcopy(model), copy.deepcopy(model), copy.deepcopy(model).double()
    exact_batch = tuple(t.double() if t.is_floating_point() else t for t in batch)
    exact = Trainer(exact_model, exact_batch, loss_fn, "cpu")
    train_side_by_side([exact])
    exact_losses = exact.losses
    torch.npu.reset_eager_stats()
    cpu, npu = Trainer(model, batch, loss_fn, "cpu"), Trainer(npu_model, batch, loss_fn, "npu")
    serial = Trainer(serial_model, batch, loss_fn, "cpu", threads=1)
    load = os.getloadavg()[0]
    train_side_by_side([cpu, npu, serial])
    load = max(load, os.getloadavg()[0])
    cpu_losses, cpu_ms, cpu_grads = cpu.losses, cpu.times, cpu.first_grads
    npu_losses, npu_ms, npu_grads = npu.losses, npu.times, [g.cpu() for g in npu.first_grads]
    fallbacks = {op: row["fallback"] for op, row in torch.npu.eager_stats().items() if row["fallback"]}
    grad_err = max((n - c).norm().item() / max(c.norm().item(), 1e-12) for n, c in zip(npu_grads, cpu_grads))
    diff = lambda a, b: abs(a - b) / max(abs(b), LOSS_FLOOR)
    worst = max(diff(a, b) for a, b in zip(npu_losses, cpu_losses))
    cpu_eval, npu_eval = eval_loss(model, batch, loss_fn, "cpu"), eval_loss(npu_model, batch, loss_fn, "npu")
    exact_eval = eval_loss(exact_model, exact_batch, loss_fn, "cpu")
    eval_diff = diff(npu_eval, cpu_eval)
    steady_cpu, steady_npu = statistics.median(cpu_ms[2:]), statistics.median(npu_ms[2:])
    ok = grad_err <= GRAD_RTOL and losses_agree(npu_losses + [npu_eval], cpu_losses + [cpu_eval],
                                                exact_losses + [exact_eval])
    print(f"{name}: {sum(p.numel() for p in model.parameters()) / 1e6:.2f} M parameters, {STEPS} AdamW steps, "
          f"{torch.get_num_threads()} CPU threads, npu and CPU steps alternating, load average up to {load:.1f}")
    print(f"  first-step gradients: max relative error {grad_err:.1e} over {len(cpu_grads)} parameters")
    print(f"  train loss npu {' '.join(f'{x:.4f}' for x in npu_losses)}")
    print(f"  train loss cpu {' '.join(f'{x:.4f}' for x in cpu_losses)}   max diff {worst:.1e}")
    print(f"  float64    cpu {' '.join(f'{x:.4f}' for x in exact_losses)}")
    print(f"  eval loss  npu {npu_eval:.4f}  cpu {cpu_eval:.4f}  float64 {exact_eval:.4f}   diff {eval_diff:.1e}   "
          f"parity {'ok' if ok else 'MISMATCH'}")
    print(f"  fallback ops: {', '.join(f'{op} x{n}' for op, n in sorted(fallbacks.items())) or 'none'}")
    print(f"  first step  npu {npu_ms[0]:9.1f} ms  cpu {cpu_ms[0]:8.1f} ms")
    print(f"  steady step npu {steady_npu:9.1f} ms  cpu {steady_cpu:8.1f} ms   ratio npu/cpu {steady_npu / steady_cpu:5.2f}x")
    steady_serial = statistics.median(serial.times[2:])
    print(f"  steady step cpu on 1 thread {steady_serial:8.1f} ms   ratio npu/cpu-1-thread {steady_npu / steady_serial:5.2f}x")
    work_npu, work_serial = statistics.median(npu.cpu_times[2:]), statistics.median(serial.cpu_times[2:])
    print(f"  steady step CPU time npu {work_npu:8.1f} ms (host, stream and AI-core threads)  cpu on 1 thread "
          f"{work_serial:8.1f} ms   ratio {work_npu / work_serial:5.2f}x")
    return ok and not fallbacks


def main(argv: list[str]) -> int:
    names = [a for a in argv if not a.startswith("--")] or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        print(f"unknown model(s) {unknown}; choose from {list(MODELS)}", file=sys.stderr)
        return 2
    import_libraries()
    results = {name: bench(name) for name in names}
    print("summary: " + ", ".join(f"{n} {'ok' if r else 'NOT OK'}" for n, r in results.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
