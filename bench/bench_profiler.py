"""What profiling costs on the eager hit path, each against a peer measured in the same run.

A loop of `x + y` on 1-element npu tensors (cached kernel: key, allocate, launch), in
microseconds per op:
  off          no profiler: the runtime's only cost is one relaxed atomic load per task
  cpu          torch.profiler with ProfilerActivity.CPU only (torch's own per-op recording)
  cpu+npu      ProfilerActivity.CPU and NPU: adds the runtime records and the Kineto plug-in
and, for scale, torch on the CPU. The plug-in's own cost is cpu+npu minus cpu. Each
figure is the best of several interleaved rounds (the machine is shared).

Then what the off path costs against a build with no profiler hooks at all: this build's
object files linked twice, against a runtime built with the hooks and against one built
with -DNPURT_PROFILER_HOOKS=OFF (no per-task check), both run as fresh processes in turn,
the same loop.

Then the modeled 910B time (torch_npu/profiler/modeled_time.py) of a large fp16 matmul and
a bandwidth-bound fp32 add against the time the 910B's published peaks give (fp16 cube
~313 TFLOPS, HBM2e ~1.6 TB/s; the model itself uses the HBM figure, so the add's ratio
checks only that its per-core pipes do not bind first).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
import warnings
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

import torch_npu  # noqa: F401

CALLS = 20000
ROUNDS = 5


def loop_us(x: torch.Tensor, y: torch.Tensor, sync) -> float:
    start = time.perf_counter()
    for _ in range(CALLS):
        x + y
    sync()
    return (time.perf_counter() - start) / CALLS * 1e6


def profiled_us(x: torch.Tensor, y: torch.Tensor, activities: list[ProfilerActivity]) -> float:
    with profile(activities=activities):
        return loop_us(x, y, torch.npu.synchronize)


def main() -> None:
    warnings.filterwarnings("ignore")
    x, y = torch.randn(1), torch.randn(1)
    xn, yn = x.npu(), y.npu()
    (xn + yn).cpu()  # compile once
    profiled_us(xn, yn, [ProfilerActivity.CPU, ProfilerActivity.NPU])  # Kineto's one-time init
    best = {"off": float("inf"), "cpu": float("inf"), "cpu+npu": float("inf"), "torch CPU": float("inf")}
    for _ in range(ROUNDS):
        best["off"] = min(best["off"], loop_us(xn, yn, torch.npu.synchronize))
        best["cpu"] = min(best["cpu"], profiled_us(xn, yn, [ProfilerActivity.CPU]))
        best["cpu+npu"] = min(best["cpu+npu"], profiled_us(xn, yn, [ProfilerActivity.CPU, ProfilerActivity.NPU]))
        best["torch CPU"] = min(best["torch CPU"], loop_us(x, y, lambda: None))
    assert torch_npu._C._profiler_pending_records() == 0 and not torch_npu._C._profiler_runtime_enabled()
    print("x + y, 1 element, us/op: " + ", ".join(f"{k} {v:.2f}" for k, v in best.items()))
    print(f"profiler off vs torch CPU: {best['off'] / best['torch CPU']:.2f}x; "
          f"CPU-only profiling: {best['cpu'] / best['off']:.2f}x of off; "
          f"CPU+NPU profiling: {best['cpu+npu'] / best['off']:.2f}x of off "
          f"(plug-in and records: +{best['cpu+npu'] - best['cpu']:.2f} us/op)")


ROOT = Path(__file__).resolve().parents[1]
VARIANT_DIR = ROOT / "build" / "bench-no-profiler-hooks"
EXTENSION = "_C.cpython-311-x86_64-linux-gnu.so"
# Runs the off loop in a fresh process, on this build's extension or on the one at argv[1].
OFF_LOOP = f"""
import importlib.util, sys, time, warnings
import torch
if sys.argv[1]:
    spec = importlib.util.spec_from_file_location("torch_npu._C", sys.argv[1])
    module = importlib.util.module_from_spec(spec)
    sys.modules["torch_npu._C"] = module
    spec.loader.exec_module(module)
import torch_npu
warnings.filterwarnings("ignore")
assert bool(sys.argv[1]) == (torch_npu._C.__file__ == sys.argv[1])
x, y = torch.randn(1).npu(), torch.randn(1).npu()
(x + y).cpu()
best = float("inf")
for _ in range({ROUNDS}):
    start = time.perf_counter()
    for _ in range({CALLS}):
        x + y
    torch.npu.synchronize()
    best = min(best, (time.perf_counter() - start) / {CALLS} * 1e6)
print(best)
"""


def copy_objects(ext_build: Path, dest: Path) -> None:
    """This build's object files, copied once none was written for a few seconds (helpers share
    the checkout: a concurrent `make build` may be rewriting some)."""
    objects = sorted((ext_build / "CMakeFiles" / "_C.dir").rglob("*.o"))
    for _ in range(60):
        newest = max(o.stat().st_mtime for o in objects)
        if time.time() - newest > 5:
            break
        time.sleep(5)
    for o in objects:
        target = dest / o.relative_to(ext_build)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(o.read_bytes())
    assert max(o.stat().st_mtime for o in objects) == newest, "a build rewrote objects while they were copied"


def build_variants() -> dict[str, Path]:
    """The extension linked twice from one copy of this build's objects: against a runtime with
    the profiler hooks and against one without (both runtimes built here, Release)."""
    ext_build = ROOT / "build" / "cp311-cp311-linux_x86_64"
    copy_objects(ext_build, VARIANT_DIR / "objects")
    link = subprocess.run(["ninja", "-C", str(ext_build), "-t", "commands", EXTENSION], check=True,
                          capture_output=True, text=True).stdout.strip().splitlines()[-1]
    variants = {}
    for name, hooks in (("hooks", "ON"), ("none", "OFF")):
        runtime = VARIANT_DIR / f"runtime-{name}"
        subprocess.run(["cmake", "-S", str(ROOT / "runtime"), "-B", str(runtime), "-G", "Ninja",
                        "-DCMAKE_BUILD_TYPE=Release", f"-DNPURT_PROFILER_HOOKS={hooks}"], check=True,
                       capture_output=True)
        subprocess.run(["cmake", "--build", str(runtime)], check=True, capture_output=True)
        out = VARIANT_DIR / name / EXTENSION
        out.parent.mkdir(parents=True, exist_ok=True)
        # ": && g++ ... -o _C.so ... && cd ... && strip ...": the g++ step alone.
        steps, step = [], []
        for token in shlex.split(link):
            if token == "&&":
                steps, step = steps + [step], []
            else:
                step.append(token)
        args = next(step for step in steps + [step] if "-shared" in step)
        args = [str(runtime / "libnpurt.a") if a == "runtime/libnpurt.a" else str(out) if a == EXTENSION else a
                for a in args]
        subprocess.run(args, cwd=VARIANT_DIR / "objects", check=True, capture_output=True)
        variants[name] = out
    return variants


def off_vs_no_hooks() -> None:
    try:
        variants = build_variants()
    except (subprocess.CalledProcessError, OSError, AssertionError) as e:
        print(f"profiler off vs no hooks: could not build the variants ({e})")
        return
    best = {"hooks": float("inf"), "none": float("inf")}
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    for _ in range(3):
        for name, path in variants.items():
            us = float(subprocess.run([sys.executable, "-c", OFF_LOOP, str(path)], check=True, capture_output=True,
                                      text=True, env=env).stdout.split()[-1])
            best[name] = min(best[name], us)
    hooks, none = best["hooks"], best["none"]
    print(f"profiler off vs a build without hooks, x + y us/op: off {hooks:.2f}, no hooks {none:.2f} "
          f"({hooks / none:.3f}x, {hooks - none:+.2f} us)")


def modeled_vs_published() -> None:
    from torch_npu.profiler.modeled_time import model_kernel

    n, elems = 8192, 2**26
    matmul = model_kernel('"ascend.matmul"\n}) {block_dim = 24 : i64, core_type = "aic", function_type = '
                          f"(tensor<{n}x{n}xf16>, tensor<{n}x{n}xf16>) -> tensor<{n}x{n}xf16>, tiling = "
                          f'{{k = {n} : i64, kind = "matmul", m = {n} : i64, n = {n} : i64}}}}')
    add = model_kernel('"ascend.binary"\n}) {block_dim = 48 : i64, core_type = "aiv", function_type = '
                       f"(tensor<{elems}xf32>, tensor<{elems}xf32>) -> tensor<{elems}xf32>}}")
    published_mm = 2 * n**3 / 313e12 * 1e6
    published_add = 3 * 4 * elems / 1.6e12 * 1e6
    print(f"modeled 910B: {n}^3 fp16 matmul {matmul.us:.0f} us vs published-peak {published_mm:.0f} us "
          f"({matmul.us / published_mm:.2f}x); 64M fp32 add {add.us:.0f} us vs {published_add:.0f} us "
          f"({add.us / published_add:.2f}x)")


if __name__ == "__main__":
    main()
    off_vs_no_hooks()
    modeled_vs_published()
