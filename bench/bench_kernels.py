"""Simulated-device kernels vs torch CPU on the same threads: 16M f32 elementwise chain, 1024^3 matmul.

Prints kernel time of the sim target (blocks spread over a pool of N host threads, as the runtime's
AI-core pool does) against torch with torch.set_num_threads(N), the ratio torch/sim (>1 = sim
faster), and the median compile time per kernel over a set of distinct kernels (cold cache).

    python bench/bench_kernels.py --ascendc <kernel cache folder> [--sample N]
instead re-emits the AscendC of every distinct pipeline kernel recorded in that folder (e.g. one
bench_pipeline or a test run filled) and prints, per kernel kind: emitted (and how many of them on
the scalar unit), and for a sample of N emitted kernels per kind: built by g++ against the CPU
twin, and matching the sim (the kernel's launch through the generated ACL code on the simulated
runtime, against the sim target's build of the same tiled kernel, on the same random inputs; a
scalar parameter is an input like any other); then every kind below 100 % in any of the three.

    python bench/bench_kernels.py --tile-programs
compares, on the Ascend pipeline's own kernels, the sim build from the tile-level program
(ascend-lower-tiles + sim-lower-tile-ops, targets/sim/kernel.py TILE_PROGRAM_KINDS) with the build
from the tiled kernel's tensor ops, kind by kind: CPU ms of a cold compile (median) and the kernel's
run time on one host thread (min), each kernel built both ways in the same process.
"""

from __future__ import annotations

import os
import resource
import statistics
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from npu_mlir.frontend import import_fx_graph
from npu_mlir.targets.sim.build import SimTiling, compile_linalg, run_on_host

THREADS = min(os.cpu_count() or 1, 8)


def best_ms(fn, repeat: int = 7) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return min(times)


def compare(name: str, fn, inputs, blocks: int) -> None:
    graph = import_fx_graph(fn, inputs)
    kernel = compile_linalg(graph.module, SimTiling(blocks), name=name)
    (out,) = run_on_host(kernel, inputs, threads=THREADS)
    torch.testing.assert_close(out, fn(*inputs), rtol=1e-4, atol=1e-4)
    sim = best_ms(lambda: run_on_host(kernel, inputs, threads=THREADS))
    ref = best_ms(lambda: fn(*inputs))
    print(f"{name:28s} sim {sim:8.2f} ms  torch {ref:8.2f} ms  torch/sim {ref / sim:5.2f}x  "
          f"(block_dim {kernel.block_dim}, {THREADS} threads, compile {kernel.compile_ms:.0f} ms)")


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (the linker): robust to a busy machine."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def compile_times() -> tuple[list[float], list[float]]:
    x, w = torch.randn(256, 512), torch.randn(512, 256)
    graphs = [
        (lambda a: a + 1, [x]), (lambda a: torch.exp(a) * 2, [x]), (lambda a: torch.relu(a) - a, [x]),
        (lambda a: torch.tanh(a) + a * a, [x]), (lambda a: a.sum(-1), [x]), (lambda a: a.amax(0), [x]),
        (lambda a: torch.softmax(a, -1), [x]), (lambda a: F.gelu(a), [x]), (lambda a, b: a @ b, [x, w]),
        (lambda a: F.layer_norm(a, (512,)), [x]), (lambda a: torch.sigmoid(a) * a, [x]),
        (lambda a: a.half() * 3, [x]),
    ]
    wall, cpu = [], []
    for n, (fn, inputs) in enumerate(graphs):
        graph = import_fx_graph(fn, inputs)
        start = cpu_seconds()
        kernel = compile_linalg(graph.module, SimTiling(8), name=f"ct{n}")
        cpu.append((cpu_seconds() - start) * 1e3)
        wall.append(kernel.compile_ms)
    return wall, cpu


# ---- AscendC coverage (--ascendc)
TWIN_DRIVER = r"""#include <cstdio>
#include <fstream>
#include <vector>
#include "npurt/acl_rt.h"
extern "C" aclError main_run(const void* const*, void* const*, int32_t, aclrtStream, float*);
int main(int argc, char** argv) {
  const size_t inBytes[] = {IN_BYTES}, outBytes[] = {OUT_BYTES};
  const int nIn = NIN, nOut = sizeof outBytes / sizeof outBytes[0];
  std::vector<std::vector<char>> ins, outs;
  std::vector<const void*> inPtrs;
  std::vector<void*> outPtrs;
  for (int i = 0; i < nIn; ++i) {
    ins.emplace_back(inBytes[i]);
    std::ifstream(argv[1 + i], std::ios::binary).read(ins.back().data(), inBytes[i]);
    inPtrs.push_back(ins.back().data());
  }
  for (int i = 0; i < nOut; ++i) { outs.emplace_back(outBytes[i]); outPtrs.push_back(outs.back().data()); }
  aclrtStream stream = nullptr;
  if (aclrtGetStreamByIndex(0, 0, &stream) != ACL_SUCCESS) return 2;
  if (main_run(inPtrs.data(), outPtrs.data(), 0, stream, nullptr) != ACL_SUCCESS) {
    std::fprintf(stderr, "main_run failed: %s\n", aclGetRecentErrMsg());
    return 1;
  }
  for (int i = 0; i < nOut; ++i) std::ofstream(argv[1 + nIn + i], std::ios::binary).write(outs[i].data(), outBytes[i]);
  return 0;
}
"""


# (rtol, atol) of a twin result against the sim's, by result dtype: the two may sum a reduction or a
# K loop in another order, so a float result may differ by a few rounding steps of its dtype (f16:
# 2^-10 relative, bf16: 2^-7); integers and bools are exact.
TWIN_TOLERANCE = {torch.float64: (1e-7, 1e-9), torch.float32: (1e-4, 1e-5),
                  torch.float16: (4e-3, 1e-4), torch.bfloat16: (3e-2, 1e-3)}


def _with_yield_segments(kernel_text: str) -> str:
    """A kernel recorded before ascend.yield stored its values as runs of equal types (kernel_ops
    RESULT_TYPE_RUNS), or when it stored 4 runs, with the segment sizes it now needs: such records
    stay in a shared cache."""
    import re

    from npu_mlir.dialects.ascend.kernel_ops import RESULT_TYPE_RUNS, segment_sizes

    def add(match: re.Match) -> str:
        types = [t.strip() for t in re.split(r",\s*(?=tensor<|[fiu]\d|index)", match.group(2)) if t.strip()]
        sizes = ", ".join(map(str, segment_sizes(types, RESULT_TYPE_RUNS, "an ascend.yield", "value")))
        return f'"ascend.yield"({match.group(1)}) {{operandSegmentSizes = array<i32: {sizes}>}} : ({match.group(2)}) -> ()'

    def pad(match: re.Match) -> str:
        sizes = match.group(2).split(", ")
        return f"{match.group(1)}operandSegmentSizes = array<i32: {', '.join(sizes + ['0'] * (RESULT_TYPE_RUNS - len(sizes)))}>"

    kernel_text = re.sub(r'"ascend\.yield"\(([^)]*)\) : \((.*)\) -> \(\)', add, kernel_text)
    return re.sub(r'("ascend\.yield"\([^)]*\) \{)operandSegmentSizes = array<i32: (\d+(?:, \d+){3})>', pad, kernel_text)


def _recorded_kernels(cache: Path) -> dict[str, dict]:
    import json

    kernels = {}
    for entry in cache.rglob("entry-*.json"):
        record = json.loads(entry.read_text()).get("kernel") or {}
        if record.get("path") == "pipeline":
            kernels.update({s["symbol"]: dict(s, tiled_mlir=_with_yield_segments(s["tiled_mlir"]))
                            for s in record["sources"]})
    return kernels


def _kind(kernel) -> str:
    from torch_mlir import ir

    return ir.StringAttr(kernel.attributes["fusion"]).value if "fusion" in kernel.attributes else "?"


def _launching_module(kernel_text: str):
    """A module of the kernel and a host function `main` that launches it once."""
    from torch_mlir import ir
    from torch_mlir.dialects import func

    from npu_mlir.dialects.ascend import LaunchOp

    module = ir.Module.parse("module {\n" + kernel_text + "\n}")
    kernel = next(iter(module.body.operations)).operation
    ftype = ir.FunctionType(ir.TypeAttr(kernel.attributes["function_type"]).value)
    with ir.InsertionPoint(module.body):
        main = func.FuncOp("main", ftype)
    block = main.add_entry_block()
    with ir.InsertionPoint(block):
        launch = LaunchOp(ir.FlatSymbolRefAttr.get(ir.StringAttr(kernel.attributes["sym_name"]).value),
                          list(block.arguments), list(ftype.results))
        func.ReturnOp(list(launch.results))
    return module, kernel, ftype


def _random_input(t, gen):
    from npu_mlir.targets.sim.build import MLIR_TO_TORCH

    shape, dtype = list(t.shape), MLIR_TO_TORCH[str(t.element_type)]
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen).to(dtype)
    if dtype == torch.bool:
        return torch.rand(shape, generator=gen) > 0.5
    return torch.zeros(shape, dtype=dtype)  # indices: 0 is in range of every gather


def _matches_sim(kernel_text: str, work: Path) -> tuple[bool, bool]:
    """(built against the twin, same results as the sim) for one emitted kernel."""
    import subprocess

    from torch_mlir import ir

    from npu_mlir.targets.ascendc import acl, emit
    from npu_mlir.targets.sim.kernel import compile_ascend_kernel
    from npu_mlir.tools.npu_ascendc import CXXFLAGS, RUNTIME_INCLUDE, runtime_library, twin_include_dir

    module, kernel, ftype = _launching_module(kernel_text)
    (work / "kernel.cpp").write_text(emit.emit_module(module.operation))
    (work / "host.cpp").write_text(acl.emit_module(module.operation))
    gen = torch.Generator().manual_seed(0)
    inputs = [_random_input(ir.RankedTensorType(t), gen) for t in ftype.inputs]
    out_bytes = [acl.tensor_bytes(t) for t in ftype.results]
    driver = TWIN_DRIVER.replace("IN_BYTES", ", ".join(str(x.numel() * x.element_size()) for x in inputs) or "0")
    driver = driver.replace("NIN", str(len(inputs))).replace("OUT_BYTES", ", ".join(map(str, out_bytes)))
    (work / "main.cpp").write_text(driver)
    exe = work / "program"
    built = subprocess.run(["g++", *CXXFLAGS, "-DASCENDC_CPU_DEBUG", f"-I{twin_include_dir()}", f"-I{RUNTIME_INCLUDE}",
                            *(str(work / f) for f in ("kernel.cpp", "host.cpp", "main.cpp")),
                            str(runtime_library()), "-ldl", "-o", str(exe)], capture_output=True)
    name = ir.StringAttr(kernel.attributes["sym_name"]).value
    if built.returncode != 0:
        error = next((line for line in built.stderr.decode(errors="replace").splitlines() if "error" in line), "")
        print(f"  the twin did not build {name}: {error.strip()[:160]}")
        return False, False
    files = []
    for i, x in enumerate(inputs):
        files.append(str(work / f"in{i}.bin"))
        x.contiguous().reshape(-1).view(torch.uint8).numpy().tofile(files[-1])
    outs = [str(work / f"out{i}.bin") for i in range(len(out_bytes))]
    ran = subprocess.run([str(exe), *files, *outs], capture_output=True, timeout=300)
    if ran.returncode != 0:
        print(f"  the twin's run of {name} failed: {ran.stderr.decode(errors='replace').strip()[:160]}")
        return True, False
    try:
        sim = run_on_host(compile_ascend_kernel(kernel), inputs)
    except Exception as err:  # the sim's own build gap, counted apart from a mismatch
        print(f"  sim did not run {name}: {str(err).splitlines()[0][:120]}")
        return True, False
    for path, expected in zip(outs, sim):
        got = torch.frombuffer(bytearray(Path(path).read_bytes()), dtype=torch.uint8).view(expected.dtype)
        got = got.reshape(expected.shape).double()
        rtol, atol = TWIN_TOLERANCE.get(expected.dtype, (0.0, 0.0))
        if not torch.allclose(got, expected.double(), rtol=rtol, atol=atol, equal_nan=True):
            worst = ((got - expected.double()).abs() / (atol + rtol * expected.double().abs())).nan_to_num(float("inf"))
            at = int(worst.reshape(-1).argmax())
            print(f"  {name} on the twin differs from the sim: {got.reshape(-1)[at].item():.6g} against "
                  f"{expected.double().reshape(-1)[at].item():.6g} at element {at} of {expected.numel()} "
                  f"(rtol {rtol}, atol {atol})")
            return True, False
    return True, True


def ascendc_coverage(cache: Path, sample: int) -> None:
    """Per kernel kind: emitted / distinct, and of a sample of `sample` emitted kernels per kind,
    built against the CPU twin and matching the sim; then every kind below 100 %."""
    import collections
    import random
    import re

    from torch_mlir import ir

    from npu_mlir.dialects.ascend import load_ascend
    from npu_mlir.targets.ascendc import emit

    kernels = _recorded_kernels(cache)
    context = ir.Context()
    load_ascend(context)
    # kind -> [distinct, emitted, of them scalar-unit, sampled, built on the twin, matching the sim]
    rows = collections.defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    emitted = collections.defaultdict(list)
    with context, ir.Location.unknown():
        for source in kernels.values():
            module = ir.Module.parse("module {\n" + source["tiled_mlir"] + "\n}")  # owns the kernel op
            kernel = next(iter(module.body.operations)).operation
            row = rows[_kind(kernel)]
            row[0] += 1
            try:
                text = emit.emit_kernel(kernel)
            except Exception:  # a refusal (CodegenError) or a record that holds no ascend.kernel
                continue
            row[1] += 1
            row[2] += "Runs on the scalar unit" in text
            emitted[_kind(kernel)].append(source["tiled_mlir"])
        random.seed(0)
        with tempfile.TemporaryDirectory() as work:
            for kind, texts in emitted.items():
                for text in random.sample(texts, min(sample, len(texts))):
                    b, m = _matches_sim(text, Path(work))
                    rows[kind][3:] = [rows[kind][3] + 1, rows[kind][4] + b, rows[kind][5] + m]

    def pct(part: int, whole: int) -> str:
        return f"{100 * part / whole:.1f}%" if whole else "-"

    total = [sum(r[i] for r in rows.values()) for i in range(6)]
    print(f"AscendC coverage of {total[0]} distinct pipeline kernels in {cache} "
          f"(twin and sim over a sample of up to {sample} emitted kernels per kind):")
    print(f"  {'kind':16s} {'emitted':>18s} {'built by the twin':>20s} {'matching the sim':>20s}  scalar-unit")
    below = []
    for kind, r in sorted(rows.items(), key=lambda kv: -kv[1][0]) + [("all", total)]:
        print(f"  {kind:16s} {f'{r[1]}/{r[0]} {pct(r[1], r[0])}':>18s} {f'{r[4]}/{r[3]} {pct(r[4], r[3])}':>20s} "
              f"{f'{r[5]}/{r[3]} {pct(r[5], r[3])}':>20s}  {r[2]}")
        if kind != "all" and (r[1] < r[0] or r[4] < r[3] or r[5] < r[3]):
            below.append(kind)
    print(f"kinds below 100 %: {', '.join(below) or 'none'}")
    # What the records themselves hold (issue #9's first proof): the tiling record ascend-tile left
    # on each stored kernel, and the AscendC + ACL source the compile stored with it (a record
    # stored before an emitter fix lacks what the re-emission above now gives).
    tiled = sum(1 for k in kernels.values() if re.search(r"tiling = \{\w", k["tiled_mlir"]))
    stored = [k for k in kernels.values() if k.get("ascendc") and k.get("acl")]
    print(f"stored with their records: tiling record {tiled}/{len(kernels)} {pct(tiled, len(kernels))}, "
          f"AscendC + ACL source {len(stored)}/{len(kernels)} {pct(len(stored), len(kernels))}")
    for reason, count in collections.Counter(k.get("ascendc_error", "")[:120] for k in kernels.values()
                                             if k not in stored).most_common():
        print(f"  {count} stored without AscendC: {reason}")


# ---- tile-level programs vs the tensor-op build (--tile-programs)
TILE_CASES = {
    "elementwise x*y+1 (1M)": (lambda a, b: a * b + 1, lambda: [torch.randn(1024, 1024), torch.randn(1024, 1024)]),
    "elementwise exp(x)*y (4M)": (lambda a, b: torch.exp(a) * b, lambda: [torch.randn(4 << 20), torch.randn(4 << 20)]),
    "elementwise sigmoid tail (1001x3)": (lambda a: torch.sigmoid(a) * 2 - torch.tanh(a), lambda: [torch.randn(1001, 3)]),
    "elementwise f16 mul exp (333x77)": (lambda a, b: (a * b).exp(), lambda: [torch.randn(333, 77).half()] * 2),
    "row softmax (2048x1024)": (lambda a: torch.softmax(a, -1), lambda: [torch.randn(2048, 1024)]),
    "row sum (2048x1024)": (lambda a: a.sum(-1), lambda: [torch.randn(2048, 1024)]),
    "row layer_norm (77x300)": (lambda a: F.layer_norm(a, (300,)), lambda: [torch.randn(77, 300)]),
    "row broadcast + mean (512x256)": (lambda a, b: a * b + a.mean(-1, keepdim=True),
                                       lambda: [torch.randn(512, 256), torch.randn(256)]),
    "matmul + gelu epilogue (64x96x128)": (lambda a, w: F.gelu(a @ w), lambda: [torch.randn(64, 96), torch.randn(96, 128)]),
    "matmul (256x512x256)": (lambda a, w: a @ w, lambda: [torch.randn(256, 512), torch.randn(512, 256)]),
}


def tile_programs() -> None:
    from torch_mlir import ir

    from npu_mlir.dialects.ascend import load_ascend
    from npu_mlir.pipeline import PipelineOptions, run_pipeline
    from npu_mlir.targets.sim import kernel as sim_kernel

    print(f"sim build of the pipeline's kernels: tile-level program vs tensor ops (product switch: "
          f"{', '.join(sorted(sim_kernel.TILE_PROGRAM_KINDS))}); load average {os.getloadavg()[0]:.1f}")
    print(f"  {'case':36s} {'kind':12s} {'compile CPU ms':>22s} {'run ms (1 thread)':>22s}")
    for name, (fn, make) in TILE_CASES.items():
        inputs = make()
        text = str(import_fx_graph(fn, inputs).module)
        with ir.Context(), ir.Location.unknown():
            load_ascend()
            module = ir.Module.parse(text)
            run_pipeline(module, PipelineOptions(from_torch=False, formats=False))
            main_fn = next(op.operation for op in module.body.operations if op.operation.name == "func.func")
            values = list(zip(main_fn.regions[0].blocks[0].arguments, inputs))
            lookup = lambda v: next(t for known, t in values if known == v)
            for op in main_fn.regions[0].blocks[0].operations:
                if op.name != "ascend.launch":
                    continue
                kernel = sim_kernel.kernel_ops(module)[ir.FlatSymbolRefAttr(op.attributes["callee"]).value]
                args = [lookup(v) for v in op.operands]
                row, results = [], None
                for kinds in (frozenset(), frozenset({"elementwise", "row", "matmul"})):
                    text = sim_kernel.tile_program(kernel, kinds) if kinds else None
                    if kinds and text is None:
                        row.append(None)
                        continue
                    blocks = ir.IntegerAttr(kernel.attributes["block_dim"]).value
                    with tempfile.TemporaryDirectory() as cache:
                        start = cpu_seconds()
                        built = (compile_linalg(f"module {{\n{text}\n}}", SimTiling(blocks), name="tile", cache_dir=Path(cache))
                                 if text else sim_kernel.compile_ascend_kernel(kernel, cache_dir=Path(cache)))
                        compile_ms = (cpu_seconds() - start) * 1e3
                        out = run_on_host(built, args)
                        run_ms = best_ms(lambda: run_on_host(built, args), repeat=15)
                    if results is None:
                        results = out
                    else:
                        for got, want in zip(out, results):
                            torch.testing.assert_close(got, want, rtol=2e-3, atol=2e-3)
                    row.append((compile_ms, run_ms))
                values.extend(zip(op.results, results))
                kind = ir.StringAttr(ir.DictAttr(kernel.attributes["tiling"])["kind"]).value
                if row[1] is None:
                    print(f"  {name:36s} {kind:12s} {'(no tile program)':>22s}")
                    continue
                (c0, r0), (c1, r1) = row
                print(f"  {name:36s} {kind:12s} {c1:7.0f} vs {c0:5.0f} ({c1 / c0:4.2f}x) {r1:7.3f} vs {r0:6.3f} ({r1 / r0:4.2f}x)")
    print("  (each pair: tile program vs tensor ops; x > 1 = the tile program costs more)")


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--ascendc", metavar="CACHE", help="AscendC coverage of the kernels recorded in CACHE")
    parser.add_argument("--sample", type=int, default=10, help="emitted kernels per kind to build and run on the twin")
    parser.add_argument("--tile-programs", action="store_true", help="tile-level program vs tensor-op sim builds")
    args = parser.parse_args()
    if args.tile_programs:
        tile_programs()
        return
    if args.ascendc:
        ascendc_coverage(Path(args.ascendc), args.sample)
        return
    os.environ["TORCH_NPU_KERNEL_CACHE"] = tempfile.mkdtemp(prefix="npu_bench_kernels_")
    torch.set_num_threads(THREADS)
    x, y = torch.randn(16 * 1024 * 1024), torch.randn(16 * 1024 * 1024)
    compare("elementwise x*y+1 relu (16M)", lambda a, b: torch.relu(a * b + 1.0), [x, y], blocks=48)
    compare("elementwise exp(x)*y (16M)", lambda a, b: torch.exp(a) * b, [x, y], blocks=48)
    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    compare("matmul 1024^3 f32", lambda a, b: a @ b, [a, b], blocks=24)
    wall, cpu = compile_times()
    print(f"compile time per kernel (cold, {len(wall)} kernels): median {statistics.median(wall):.1f} ms wall, "
          f"{statistics.median(cpu):.1f} ms CPU; max {max(wall):.1f} ms wall; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
