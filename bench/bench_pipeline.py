"""How much of the eager path the ascend pipeline builds, over the op_db float32 suite (cold cache).

Runs test_op_db.py's ops in float32 (forward + backward, op_db_parity.check_dtype) on npu with an
empty kernel cache, then reads back every cache record (one per distinct call key) and prints:
  records   built through the pipeline (tiled, launch list) / from linalg (the top reasons why)
  kernels   distinct kernels of pipeline records: AscendC emitted / compiled by g++ against the
            CPU twin (kernel + its ACL launcher; a sample of --twin kernels) / matching the sim
            (not measured yet)
  calls     compiled eager calls that ran a pipeline record (eager_stats()["pipeline"])
  compile   median cold build per record on each path, against the same suite built with
            TORCH_NPU_EAGER_PIPELINE=0 (everything from linalg, as before the pipeline took over)
            in a second process: the peer of the same run.

Usage: python bench/bench_pipeline.py [--ops N] [--twin N]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EAGER_TESTS = REPO / "test" / "py" / "eager"


def run_suite(limit: int | None) -> dict:
    """Run the suite in this process (the cache directory is set by the caller); counters and records."""
    sys.path.insert(0, str(EAGER_TESTS))
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    from op_db_parity import check_dtype, op_id
    from test_op_db import PASSING

    torch.npu.reset_eager_stats()
    infos = [info for info in op_db if op_id(info) in PASSING][:limit]
    failed = []
    for info in infos:
        try:
            check_dtype(info, torch.float32)
        except Exception as err:  # counted, not fatal: the bench measures coverage, the test asserts it
            failed.append(f"{op_id(info)}: {type(err).__name__}")
    stats = torch.npu.eager_stats()
    cache = Path(os.environ["TORCH_NPU_KERNEL_CACHE"])
    # Built records only: the disk cache also keeps refusals and baked-argument markers.
    records = [k for p in cache.rglob("entry-*.json") if "path" in (k := json.loads(p.read_text()).get("kernel", {}))]
    return {"ops": len(infos), "failed": failed, "records": records,
            "compiled": sum(r["compiled"] for r in stats.values()),
            "pipeline": sum(r.get("pipeline", 0) for r in stats.values()),
            "fallback": sum(r["fallback"] for r in stats.values())}


def _twin_compiles(source: dict, work: Path) -> bool:
    from npu_mlir.tools.npu_ascendc import CXXFLAGS, RUNTIME_INCLUDE, twin_include_dir

    path = work / f"{source['symbol']}.cpp"
    # The launcher repeats the tiling struct the kernel source defines: each is its own unit.
    ok = True
    for part, text in (("kernel", source["ascendc"]), ("acl", source["acl"])):
        unit = path.with_suffix(f".{part}.cpp")
        unit.write_text(text)
        done = subprocess.run(["g++", *CXXFLAGS, "-DASCENDC_CPU_DEBUG", "-I", str(twin_include_dir()),
                               "-I", str(RUNTIME_INCLUDE), "-c", str(unit), "-o", str(unit.with_suffix(".o"))],
                              capture_output=True)
        ok = ok and done.returncode == 0
    return ok


def kernel_kind(source: dict) -> str:
    """The fusion kind ascend-fuse gave the kernel; for an opaque one, the upstream ops it holds."""
    text = source["tiled_mlir"]
    fusion = re.search(r'fusion = "(\w+)"', text)
    kind = fusion.group(1) if fusion else "?"
    if kind == "opaque":
        reason = re.search(r'reason = "([^"]*) has no vector tiling"', text)
        ops = [o for o in (reason.group(1).split(", ") if reason else []) if o not in ("tensor.empty", "linalg.fill")]
        kind += f" ({', '.join(ops) or '?'})"
    return kind


def report(result: dict, peer: dict | None, twin: int) -> None:
    records = result["records"]
    on_pipeline = [r for r in records if r["path"] == "pipeline"]
    # The last diagnostic line without its location: the kind of gap, not where it sat.
    reasons = collections.Counter(re.sub(r'^loc\([^)]*\): ', "", r["reason"].splitlines()[-1])[:110]
                                  for r in records if r["path"] == "linalg")
    kernels = {s["symbol"]: s for r in on_pipeline for s in r["sources"]}
    emitted = [s for s in kernels.values() if s["ascendc"]]
    print(f"op_db float32 suite: {result['ops']} ops, {len(result['failed'])} did not match, "
          f"{result['fallback']} fallback calls")
    print(f"records: {len(on_pipeline)}/{len(records)} through the pipeline "
          f"({100 * len(on_pipeline) / max(1, len(records)):.0f}%), {len(records) - len(on_pipeline)} from linalg")
    for reason, n in reasons.most_common(8):
        print(f"  {n:4d} x linalg: {reason}")
    line = (f"AscendC coverage over {len(kernels)} distinct pipeline kernels: emitted {len(emitted)} "
            f"({100 * len(emitted) / max(1, len(kernels)):.0f}%)")
    if twin:
        # Two g++ builds per kernel: a sample keeps the bench in minutes.
        sample = emitted[::max(1, len(emitted) // twin)][:twin]
        with tempfile.TemporaryDirectory() as work:
            compiled = sum(_twin_compiles(s, Path(work)) for s in sample)
        line += f", CPU-twin compiled {compiled} of a sample of {len(sample)} emitted"
    print(line + ", matching the sim: not measured yet")
    missing = collections.Counter(s["ascendc_error"].split("(")[-1][:90] for s in kernels.values() if not s["ascendc"])
    for why, n in missing.most_common(6):
        print(f"  {n:4d} x no AscendC: {why}")
    by_kind = collections.defaultdict(lambda: [0, 0])
    for s in kernels.values():
        by_kind[kernel_kind(s)][0] += 1
        by_kind[kernel_kind(s)][1] += bool(s["ascendc"])
    print("kernel kinds below 100% AscendC (kind: emitted/distinct):")
    for kind, (n, ok) in sorted(by_kind.items(), key=lambda kv: kv[1][1] - kv[1][0]):
        if ok < n:
            print(f"  {kind}: {ok}/{n}")
    print(f"calls: {result['pipeline']}/{result['compiled']} compiled eager calls ran a pipeline record "
          f"({100 * result['pipeline'] / max(1, result['compiled']):.0f}%)")
    med = lambda rs: statistics.median(r["compile_ms"] for r in rs) if rs else float("nan")
    linalg = [r for r in records if r["path"] == "linalg"]
    print(f"cold build per record: pipeline path median {med(on_pipeline):.0f} ms, linalg path median {med(linalg):.0f} ms")
    if peer is not None:
        print(f"peer (TORCH_NPU_EAGER_PIPELINE=0, same suite): median {med(peer['records']):.0f} ms over "
              f"{len(peer['records'])} records, {len(peer['failed'])} ops did not match, {peer['fallback']} fallback calls")


# Cold-miss stage split: calls as the dispatcher describes them (op, args), 9 ops x 5 shapes.
STAGE_OPS = [("aten::add.Tensor", 2, [1]), ("aten::mul.Tensor", 2, []), ("aten::sub.Tensor", 2, [1]),
             ("aten::maximum", 2, []), ("aten::minimum", 2, []), ("aten::exp", 1, []), ("aten::tanh", 1, []),
             ("aten::relu", 1, []), ("aten::sigmoid", 1, [])]
STAGE_SHAPES = [(3, 17), (5, 29), (8, 41), (2, 3, 11), (64,)]


def _timed(owner, name: str, stage: str, spent: dict) -> None:
    """Wrap owner.name so each call adds its wall time to spent[stage]."""
    import time

    inner = getattr(owner, name)

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[stage] = spent.get(stage, 0.0) + (time.perf_counter() - start) * 1e3

    setattr(owner, name, wrapper)


def stage_split(opt_level: int | None) -> None:
    """Median ms per cold miss and per stage: plan (user process), trace (make_fx), torch-mlir (import +
    to linalg), pipeline passes, kernel lowering (sim schedule + upstream to LLVM dialect), LLVM (codegen
    to an object), link (ld), load (dlopen), rest (launch list, AscendC / ACL emitters)."""
    import ctypes
    import time
    import types

    import torch
    import torch_npu  # noqa: F401 (the plan reads torch_npu's op facts)
    from npu_mlir import pipeline
    from npu_mlir.frontend import kernel_build, torch_import
    from npu_mlir.targets.sim import lowering, object as sim_object

    from torch_npu.eager.plan import plan_call

    if opt_level is not None:
        sim_object.OPT_LEVEL = opt_level
    spent: dict[str, float] = {}
    _timed(torch_import, "_trace", "trace", spent)
    _timed(torch_import, "_lower", "torch-mlir", spent)
    _timed(pipeline, "run_pipeline", "passes", spent)
    for name in ("prepare", "schedule", "lower"):
        _timed(lowering, name, "lowering", spent)
    engine = sim_object.ExecutionEngine

    def timed_engine(*args, **kwargs):
        start = time.perf_counter()
        built = engine(*args, **kwargs)
        dump = built.dump_to_object_file

        def timed_dump(path):
            t = time.perf_counter()
            dump(path)
            spent["LLVM"] = spent.get("LLVM", 0.0) + (time.perf_counter() - t) * 1e3

        spent["LLVM"] = spent.get("LLVM", 0.0) + (time.perf_counter() - start) * 1e3
        return types.SimpleNamespace(dump_to_object_file=timed_dump)

    sim_object.ExecutionEngine = timed_engine
    sim_object.subprocess = types.SimpleNamespace(run=sim_object.subprocess.run)
    _timed(sim_object.subprocess, "run", "link", spent)
    rows = []
    with tempfile.TemporaryDirectory() as cache:
        for op, n_tensors, extra in STAGE_OPS:
            for shape in STAGE_SHAPES:
                t = torch.randn(shape)
                desc = ("T", "Float", list(t.shape), list(t.stride()), 2)
                spent.clear()
                start = time.perf_counter()
                plan = plan_call(op, [desc] * n_tensors + extra, 2)
                spent["plan"] = (time.perf_counter() - start) * 1e3
                record = kernel_build.build(dict(plan.request, cache_dir=cache))
                t = time.perf_counter()
                for launch in record["launches"]:
                    ctypes.CDLL(launch["so_path"], mode=ctypes.RTLD_LOCAL)
                spent["load"] = (time.perf_counter() - t) * 1e3
                total = (time.perf_counter() - start) * 1e3
                spent["rest"] = total - sum(spent.values())
                rows.append(dict(spent, total=total))
    rows = rows[1:]  # the first build pays one-time imports and contexts
    stages = ["plan", "trace", "torch-mlir", "passes", "lowering", "LLVM", "link", "load", "rest", "total"]
    med = {s: statistics.median(r.get(s, 0.0) for r in rows) for s in stages}
    level = sim_object.OPT_LEVEL
    print(f"cold miss over {len(rows)} keys, LLVM -O{level}, median ms per stage: "
          + ", ".join(f"{s} {med[s]:.1f}" for s in stages))


# Kernels whose run time an LLVM level could change: (op, shapes of its tensor arguments).
RUN_TIME_CALLS = [("aten::exp", [(1024, 1024)]), ("aten::_softmax", [(1024, 1024)]), ("aten::mul.Tensor", [(1024, 1024)] * 2),
                  ("aten::sum.dim_IntList", [(1024, 1024)]), ("aten::mm", [(256, 256)] * 2)]


def run_time(levels: list[int]) -> None:
    """Kernel run time (all blocks, one host thread, median of 7) of RUN_TIME_CALLS built at each LLVM level
    (what a cheaper level would cost at run time, against what it saves in --stages)."""
    import ctypes
    import time

    import torch
    import torch_npu  # noqa: F401
    from npu_mlir.frontend import kernel_build
    from npu_mlir.targets.sim import object as sim_object

    from torch_npu.eager.plan import plan_call

    extra = {"aten::sum.dim_IntList": [[1], False, None], "aten::_softmax": [1, False]}
    line = []
    for level in levels:
        sim_object.OPT_LEVEL = level
        with tempfile.TemporaryDirectory() as cache:
            times = []
            for op, shapes in RUN_TIME_CALLS:
                tensors = [torch.rand(s) for s in shapes]
                desc = [("T", "Float", list(t.shape), list(t.stride()), 2) for t in tensors]
                record = kernel_build.build(dict(plan_call(op, desc + extra.get(op, []), 2).request, cache_dir=cache))
                buffers = {("in", i): t for i, t in enumerate(tensors)}
                buffers.update({("out", j): torch.empty(o[0]) for j, o in enumerate(record["outputs"])})
                buffers.update({("tmp", k): torch.empty(n // 4 + 1) for k, n in enumerate(record["temps"])})
                calls = []
                for launch in record["launches"]:
                    fn = getattr(ctypes.CDLL(launch["so_path"]), launch["symbol"])
                    fn.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32]
                    slots = (ctypes.c_uint64 * len(launch["refs"]))(*[buffers[tuple(r)].data_ptr() for r in launch["refs"]])
                    calls.append((fn, slots, launch["block_dim"]))
                samples = []
                for _ in range(7):
                    start = time.perf_counter()
                    for fn, slots, blocks in calls:
                        for b in range(blocks):
                            fn(slots, b, blocks)
                    samples.append((time.perf_counter() - start) * 1e3)
                times.append(statistics.median(samples))
        line.append(f"-O{level}: " + " ".join(f"{op.split('::')[1]} {t:.2f}" for (op, _), t in zip(RUN_TIME_CALLS, times)))
    print("kernel run time, ms (1024x1024 f32; mm 256^3):\n  " + "\n  ".join(line))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", type=int, default=None, help="first N ops of the suite only")
    parser.add_argument("--twin", type=int, default=30, help="emitted kernels to build against the CPU twin (0: none)")
    parser.add_argument("--no-peer", action="store_true", help="skip the TORCH_NPU_EAGER_PIPELINE=0 peer run")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--stages", action="store_true", help="only the stage split of a cold miss")
    parser.add_argument("--opt-level", type=int, default=None, help="LLVM level for --stages (default: the sim's)")
    parser.add_argument("--run-time", action="store_true", help="only kernel run time at LLVM -O0/-O1/-O3")
    args = parser.parse_args()
    if args.run_time:
        run_time([0, 1, 3])
        return 0
    if args.stages:
        stage_split(args.opt_level)
        return 0
    if args.child:  # one suite run in a fresh process (its cache and path set by the parent)
        print(json.dumps(run_suite(args.ops)))
        return 0
    results = {}
    for mode in ("1",) if args.no_peer else ("1", "0"):
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, TORCH_NPU_KERNEL_CACHE=cache, TORCH_NPU_EAGER_PIPELINE=mode)
            cmd = [sys.executable, __file__, "--child"] + (["--ops", str(args.ops)] if args.ops else [])
            done = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if done.returncode != 0:
                print(done.stderr[-3000:])
                return 1
            results[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    report(results["1"], results.get("0"), twin=args.twin)
    return 0


if __name__ == "__main__":
    sys.exit(main())
