"""torch programs through the whole compiler, run from the emitted AscendC + ACL code.

torch -> FxImporter -> linalg -> pipeline (fuse, ascend-tile, ascend-plan-memory) ->
npu-translate's emitters -> g++ with the CPU twin, linked against the simulated runtime: the
generated `main_run` allocates, copies, launches every kernel and synchronizes. The result is
compared with eager torch and with the sim target compiling the same linalg module.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from torch_mlir import ir

import npu_mlir
from npu_mlir.dialects.ascend import load_ascend
from npu_mlir.frontend.references.formats import FRACTAL_NZ, to_logical, to_physical
from npu_mlir.frontend.torch_import import import_fx_graph
from npu_mlir.pipeline import PipelineOptions, run_pipeline
from npu_mlir.targets.ascendc import acl
from npu_mlir.targets.ascendc import emit as ascendc
from npu_mlir.targets.sim import build as sim
from test_cpu_twin import CXXFLAGS, twin_include_dir

REPO = Path(npu_mlir.__file__).resolve().parents[2]


def _runtime_library() -> Path | None:
    libs = sorted((REPO / "build").glob("**/libnpurt.a"), key=lambda p: p.stat().st_mtime)
    return libs[-1] if libs else None


pytestmark = pytest.mark.skipif(shutil.which("g++") is None or _runtime_library() is None,
                                reason="needs g++ and the runtime library (make build)")

DRIVER = """#include <cstdio>
#include <fstream>
#include <vector>
#include "npurt/acl_rt.h"
extern "C" aclError main_run(const void* const*, void* const*, int32_t, aclrtStream, float*);
int main(int argc, char** argv) {
  const size_t inBytes[] = {IN_BYTES};
  const size_t outBytes[] = {OUT_BYTES};
  const int nIn = sizeof inBytes / sizeof inBytes[0], nOut = sizeof outBytes / sizeof outBytes[0];
  std::vector<std::vector<char>> ins, outs;
  std::vector<const void*> inPtrs;
  std::vector<void*> outPtrs;
  for (int i = 0; i < nIn; ++i) {
    ins.emplace_back(inBytes[i]);
    std::ifstream(argv[1 + i], std::ios::binary).read(ins.back().data(), inBytes[i]);
  }
  for (int i = 0; i < nOut; ++i) outs.emplace_back(outBytes[i]);
  for (auto& v : ins) inPtrs.push_back(v.data());
  for (auto& v : outs) outPtrs.push_back(v.data());
  aclrtStream stream = nullptr;
  if (aclrtGetStreamByIndex(0, 0, &stream) != ACL_SUCCESS) return 2;
  float ms = 0.0f;
  aclError err = main_run(inPtrs.data(), outPtrs.data(), 0, stream, &ms);
  if (err != ACL_SUCCESS) {
    std::fprintf(stderr, "main_run failed: %d %s\\n", err, aclGetRecentErrMsg());
    return 1;
  }
  for (int i = 0; i < nOut; ++i) std::ofstream(argv[1 + nIn + i], std::ios::binary).write(outs[i].data(), outBytes[i]);
  return 0;
}
"""


def run_through_ascendc(tmp_path: Path, fn, examples: list[torch.Tensor]) -> tuple[list[np.ndarray], str]:
    graph = import_fx_graph(fn, examples)
    linalg_text = str(graph.module)
    with ir.Context() as ctx, ir.Location.unknown():
        load_ascend(ctx)
        module = ir.Module.parse(linalg_text)
        run_pipeline(module, PipelineOptions(from_torch=False, until="tile"))
        (tmp_path / "kernel.cpp").write_text(ascendc.emit_module(module.operation))
        (tmp_path / "host.cpp").write_text(acl.emit_module(module.operation))
        main = next(op.operation for op in module.body.operations if op.operation.name == "func.func")
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        outs = [(acl.tensor_bytes(t), ir.RankedTensorType(t)) for t in ftype.results]
        kernels_ir = str(module)
    driver = DRIVER.replace("IN_BYTES", ", ".join(str(e.numel() * e.element_size()) for e in examples))
    driver = driver.replace("OUT_BYTES", ", ".join(str(n) for n, _ in outs))
    (tmp_path / "main.cpp").write_text(driver)
    exe = tmp_path / "program"
    subprocess.run(["g++", *CXXFLAGS, f"-I{twin_include_dir()}",
                    f"-I{REPO / 'runtime' / 'include'}",
                    *(str(tmp_path / f) for f in ("kernel.cpp", "host.cpp", "main.cpp")),
                    str(_runtime_library()), "-ldl", "-o", str(exe)], check=True, capture_output=True, text=True)
    in_files = []
    for i, e in enumerate(examples):
        in_files.append(str(tmp_path / f"in{i}.bin"))
        bits = e.contiguous().view(torch.int16) if e.dtype == torch.bfloat16 else e.contiguous()
        bits.numpy().tofile(in_files[-1])
    out_files = [str(tmp_path / f"out{i}.bin") for i in range(len(outs))]
    proc = subprocess.run([str(exe), *in_files, *out_files], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return [_read_result(f, t) for f, (_, t) in zip(out_files, outs)], kernels_ir


def _read_result(path: str, t: ir.RankedTensorType) -> np.ndarray:
    """A result file as numpy; bf16 (which numpy lacks) widened to float32."""
    if str(t.element_type) == "bf16":
        bits = torch.from_numpy(np.fromfile(path, dtype=np.int16).reshape(t.shape))
        return bits.view(torch.bfloat16).float().numpy()
    return np.fromfile(path, dtype={"f32": np.float32, "f16": np.float16}[str(t.element_type)]).reshape(t.shape)


def run_sim(fn, examples: list[torch.Tensor]) -> list[torch.Tensor]:
    graph = import_fx_graph(fn, examples)
    kernel = sim.compile_linalg(graph.module)
    return sim.run_on_host(kernel, examples)


# The inputs are drawn at import: seeded here, they do not depend on what the session imported or
# drew before (a bf16 row sum near zero once missed its tolerance on other draws).
torch.manual_seed(0)
CASES = {
    "elementwise_chain": (lambda x, y: torch.relu(x + y) * torch.sigmoid(y) - 0.5,
                          [torch.randn(300, 7), torch.randn(300, 7)], 1e-5),
    "softmax_rows": (lambda x: torch.softmax(x * 2.0, dim=-1), [torch.randn(64, 100)], 1e-5),
    "row_sum": (lambda x: (x * x).sum(dim=-1), [torch.randn(50, 333)], 1e-4),
    # A 910B's ReduceSum takes half / float: a bf16 row is widened to float, reduced, rounded once.
    "row_sum_bf16": (lambda x: x.sum(dim=-1), [torch.randn(40, 75).bfloat16()], 2e-2),
    "row_max_bf16": (lambda x: x.amax(dim=-1), [torch.randn(40, 75).bfloat16()], 0),
    "gelu_erf": (lambda x: torch.nn.functional.gelu(x), [torch.randn(2000, 3)], 1e-5),
    "matmul": (lambda a, b: a @ b, [torch.randn(100, 70), torch.randn(70, 90)], 1e-4),
    # Mix kernels: the vector epilogue runs on each output tile after Fixpipe.
    "matmul_bias_silu": (lambda a, b, bias: torch.nn.functional.silu(a @ b + bias),
                         [torch.randn(96, 64), torch.randn(64, 80), torch.randn(80)], 1e-4),
    # A float epilogue of a 16-bit result cannot run in place on it: Fixpipe writes fp32 tiles to the
    # kernel's GM workspace, the AIVs read them there and write the rounded result.
    "matmul_bias_relu_bf16_out": (lambda a, b, bias: torch.relu(a @ b + bias).bfloat16(),
                                  [torch.randn(40, 24), torch.randn(24, 36), torch.randn(36)], 1e-2),
    "linear_f16_relu": (lambda x, w: torch.relu(torch.nn.functional.linear(x, w)),
                        [torch.randn(64, 48).half(), torch.randn(40, 48).half()], 2e-2),
    # fp32 with a transposed weight: the [n, k] B path without a fractal transpose.
    "linear_f32": (lambda x, w: torch.nn.functional.linear(x, w), [torch.randn(50, 70), torch.randn(40, 70)], 1e-4),
    # fp32 with a transposed A (a weight gradient's shape): LoadDataWithTranspose into L0A.
    "matmul_t_a_f32": (lambda a, b: a.t() @ b, [torch.randn(64, 50), torch.randn(64, 30)], 1e-4),
    # The high-level math APIs PIPE's emitter calls (lib/math: Tan, Sinh, Atan, ...).
    "trig_hyperbolic": (lambda x: torch.tan(x * 0.5) + torch.sinh(x) - torch.atan(x) + torch.asinh(x),
                        [torch.randn(300, 5)], 1e-5),
    "where_compare": (lambda x, y: torch.where(x > y, x * 2, y - 1), [torch.randn(333, 17), torch.randn(333, 17)], 1e-6),
}

# Cases whose epilogue runs from the GM workspace rather than in place on the result.
STAGED = {"matmul_bias_relu_bf16_out"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_pipeline_ascendc_matches_torch_and_sim(tmp_path, case):
    fn, examples, tol = CASES[case]
    torch.manual_seed(0)
    (got,), kernels_ir = run_through_ascendc(tmp_path, fn, examples)
    assert "ascend.kernel" in kernels_ir
    assert ("GM_ADDR workspace" in (tmp_path / "kernel.cpp").read_text()) == (case in STAGED)
    want = fn(*examples).float().numpy()
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    (sim_out,) = run_sim(fn, examples)
    np.testing.assert_allclose(got, sim_out.float().numpy(), rtol=tol, atol=tol)


# An fp32 operand stored in FRACTAL_NZ (16-column groups, 64-byte rows) is copied into L1's 8-column
# groups by halves, where L1 holds it in plain NZ: as A [m, k] and as a transposed B [n, k].
NZ_F32 = {
    "a_stored": (lambda w, x: torch.ops.aten.mm(to_logical(w, FRACTAL_NZ, (20, 72)), x), (20, 72), (72, 30)),
    "b_stored_transposed": (lambda w, x: torch.nn.functional.linear(x, to_logical(w, FRACTAL_NZ, (30, 72))),
                            (30, 72), (20, 72)),
}


@pytest.mark.parametrize("case", sorted(NZ_F32))
def test_fp32_operand_stored_in_nz(tmp_path, case):
    fn, stored_shape, other_shape = NZ_F32[case]
    torch.manual_seed(0)
    stored, other = to_physical(torch.randn(stored_shape), FRACTAL_NZ), torch.randn(other_shape)
    (got,), kernels_ir = run_through_ascendc(tmp_path, fn, [stored, other])
    assert f'tensor<{stored_shape[0]}x{stored_shape[1]}xf32, #ascend.format<"FRACTAL_NZ">>' in kernels_ir
    np.testing.assert_allclose(got, fn(stored, other).numpy(), rtol=1e-4, atol=1e-4)
    (sim_out,) = run_sim(fn, [stored, other])
    np.testing.assert_allclose(got, sim_out.numpy(), rtol=1e-4, atol=1e-4)


def test_matmul_epilogue_selects_by_a_bool_mask(tmp_path):
    """A dropout-shaped epilogue with two results (the activation, kept for the backward, and the
    dropped-out one), both written from UB off the workspace tile; the bool keep-mask comes from GM
    as bytes and becomes Select's bit mask in UB (Cast to half, CompareScalar != 0)."""
    def fn(a, b, bias, keep):
        h = torch.relu(a @ b + bias)
        return h, torch.where(keep, h * 1.25, 0.0)
    torch.manual_seed(0)
    examples = [torch.randn(40, 24), torch.randn(24, 36), torch.randn(36), torch.rand(40, 36) > 0.5]
    got, kernels_ir = run_through_ascendc(tmp_path, fn, examples)
    source = (tmp_path / "kernel.cpp").read_text()
    assert kernels_ir.count('"ascend.kernel"') == 1 and "CompareScalar" in source and "GM_ADDR workspace" in source
    for g, want, sim_value in zip(got, fn(*examples), run_sim(fn, examples)):
        np.testing.assert_allclose(g, want.numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(g, sim_value.numpy(), rtol=1e-5, atol=1e-5)
