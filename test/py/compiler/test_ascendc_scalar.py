"""Kernels with no vector tiling (transposes, gathers, pads, slices, concats, pooling with indices,
bool and non-trailing-broadcast elementwise kernels) as scalar-unit AscendC, run through the CPU
twin and the simulated runtime from the emitted ACL host code, against eager torch and the sim.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from torch_mlir import ir

from npu_mlir.dialects.ascend import load_ascend
from npu_mlir.frontend.torch_import import import_fx_graph
from npu_mlir.pipeline import PipelineOptions, run_pipeline
from npu_mlir.targets.ascendc import acl
from npu_mlir.targets.ascendc import emit as ascendc
from npu_mlir.targets.sim import build as sim
from test_cpu_twin import CXXFLAGS, twin_include_dir
from test_cpu_twin_pipeline import DRIVER, _runtime_library, pytestmark  # noqa: F401 (same skip rule)

NP_TYPES = {"f64": np.float64, "f32": np.float32, "f16": np.float16, "i64": np.int64, "i32": np.int32, "i1": np.bool_}


def _through_ascendc(tmp_path: Path, fn, examples: list[torch.Tensor]) -> tuple[list[np.ndarray], str]:
    return _text_through_ascendc(tmp_path, str(import_fx_graph(fn, examples).module), examples)


def _text_through_ascendc(tmp_path: Path, linalg_text: str, examples: list[torch.Tensor]) -> tuple[list[np.ndarray], str]:
    with ir.Context() as ctx, ir.Location.unknown():
        load_ascend(ctx)
        module = ir.Module.parse(linalg_text)
        run_pipeline(module, PipelineOptions(from_torch=False, until="tile"))
        source = ascendc.emit_module(module.operation)
        (tmp_path / "kernel.cpp").write_text(source)
        (tmp_path / "host.cpp").write_text(acl.emit_module(module.operation))
        main = next(op.operation for op in module.body.operations if op.operation.name == "func.func")
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        outs = [(acl.tensor_bytes(t), ir.RankedTensorType(t)) for t in ftype.results]
        out_types = [(str(t.element_type), list(t.shape)) for _, t in outs]
        out_bytes = [n for n, _ in outs]
    driver = DRIVER.replace("IN_BYTES", ", ".join(str(e.numel() * e.element_size()) for e in examples))
    (tmp_path / "main.cpp").write_text(driver.replace("OUT_BYTES", ", ".join(map(str, out_bytes))))
    exe = tmp_path / "program"
    subprocess.run(["g++", *CXXFLAGS, f"-I{twin_include_dir()}", f"-I{_runtime_library().parents[0]}",
                    f"-I{Path(ascendc.__file__).resolve().parents[4] / 'runtime' / 'include'}",
                    *(str(tmp_path / f) for f in ("kernel.cpp", "host.cpp", "main.cpp")),
                    str(_runtime_library()), "-ldl", "-o", str(exe)], check=True, capture_output=True, text=True)
    files = []
    for i, e in enumerate(examples):
        files.append(str(tmp_path / f"in{i}.bin"))
        e.contiguous().reshape(-1).view(torch.uint8).numpy().tofile(files[-1])  # raw bytes: bf16 has no numpy type
    out_files = [str(tmp_path / f"out{i}.bin") for i in range(len(outs))]
    proc = subprocess.run([str(exe), *files, *out_files], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return [np.fromfile(f, dtype=NP_TYPES[t]).reshape(s) for f, (t, s) in zip(out_files, out_types)], source


# Each case is one module of several kernels, so one g++ build covers them.
CASES = {
    "data_movement": (lambda x, y, z, i: (x.t().contiguous() * 2.0, z.permute(2, 0, 1).contiguous(),
                                          torch.nn.functional.pad(torch.cat([x[:, :4], y[:, 1:]], 1), (1, 2)),
                                          torch.gather(x, 1, i),
                                          # pow, log1p, expm1, log2 on the scalar unit, built from Ln / Exp
                                          torch.pow(z.abs() + 0.5, z[:, :1]) + torch.log1p(z.abs())
                                          + torch.expm1(z) * torch.log2(z[:, :1].abs() + 1.0)),
                      [torch.randn(6, 19), torch.randn(6, 5), torch.randn(3, 5, 7), torch.randint(0, 19, (6, 3))]),
    # A middle-dim broadcast is no vector tiling: exp and erf then run on one vector lane each. The
    # second pooling's padded input (2x8x66x66 f32, 279 KB) exceeds UB: it lives in the GM workspace.
    "indices_bools_math": (lambda x, y, w, z, big: (*torch.ops.aten.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1]),
                                                    *torch.max(y, 1), y > 0.5, torch.exp(w + z) - torch.erf(w),
                                                    torch.ops.aten.max_pool2d_with_indices(big, [3, 3], [2, 2], [1, 1])[0]),
                           [torch.randn(1, 2, 7, 9), torch.randn(6, 11), torch.randn(2, 1, 5), torch.randn(2, 3, 5),
                            torch.randn(2, 8, 64, 64)]),
    # f64 tensors in scalar double; fmod (arith.remf) and atan2 built from scalar code and Atan; bf16
    # math in float, rounded once; a constant result (torch-mlir folds the full) written by a fill kernel.
    "f64_fmod_atan2_bf16": (lambda x, a, b, c, p, q: (x * 2.5 - x * x / (x.abs() + 1.0), torch.atan2(a, b),
                                                      torch.exp(c).float(), torch.remainder(p * 7.0, q),
                                                      torch.full((3, 5), 2.5)),
                            [torch.randn(5, 9, dtype=torch.float64), torch.randn(4, 33), torch.randn(4, 33),
                             torch.randn(6, 7).bfloat16(), torch.tensor(2.3), torch.tensor(-0.7)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_scalar_unit_ascendc_matches_torch_and_sim(tmp_path, case):
    fn, examples = CASES[case]
    torch.manual_seed(0)
    got, source = _through_ascendc(tmp_path, fn, examples)
    assert "Runs on the scalar unit" in source
    if case == "indices_bools_math":
        assert "workspaceAddr" in source
    want = fn(*examples)
    want = [want] if isinstance(want, torch.Tensor) else list(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-5, atol=1e-6)
    kernel = sim.compile_linalg(import_fx_graph(fn, examples).module)
    for g, s in zip(got, sim.run_on_host(kernel, examples), strict=True):
        np.testing.assert_allclose(g, s.numpy(), rtol=1e-5, atol=1e-6)


def _f64_math(x, y):
    # Every f64 function of f64_math.py's prelude, on one module (one g++ build).
    p = x.abs() + 0.5
    return (torch.exp(x), torch.log(p), torch.log1p(p), torch.expm1(x), torch.sqrt(p), torch.rsqrt(p),
            torch.tanh(x), torch.sinh(x), torch.cosh(x), torch.asinh(x), torch.acosh(p + 1.0), torch.atanh(x * 0.3),
            torch.sin(x * 50.0), torch.cos(x * 50.0), torch.tan(x), torch.atan(x * 4.0), torch.asin(x * 0.3),
            torch.acos(x * 0.3), torch.erf(x * 2.0), torch.pow(p, y), torch.atan2(x, y), torch.log2(p),
            torch.log10(p), torch.pow(x, 3))


def test_f64_math_runs_in_double_precision(tmp_path):
    # No vector instruction takes f64: the scalar unit computes them in double arithmetic, to ~1e-15.
    torch.manual_seed(0)
    examples = [torch.randn(4, 9, dtype=torch.float64) * 3.0, torch.randn(4, 9, dtype=torch.float64)]
    got, source = _through_ascendc(tmp_path, _f64_math, examples)
    assert "F64Exp(" in source and source.count("#ifndef NPU_F64_MATH") >= 1
    for g, w in zip(got, _f64_math(*examples), strict=True):
        np.testing.assert_allclose(g, w.numpy(), rtol=1e-13, atol=1e-14)


def test_constant_results_are_written_by_kernels(tmp_path):
    # torch-mlir folds a result it can compute at compile time to a constant: a splat gets a fill
    # kernel, any other constant a copy kernel reading its values from a table in the kernel.
    text = """func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<2x3xf16>, tensor<3xi64>) {
      %c = arith.constant dense<[1.0, 2.5, -3.0, 4.0]> : tensor<4xf32>
      %d = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]]> : tensor<2x3xf16>
      %i = arith.constant dense<[7, -1, 3]> : tensor<3xi64>
      return %c, %d, %i : tensor<4xf32>, tensor<2x3xf16>, tensor<3xi64>
    }"""
    got, source = _text_through_ascendc(tmp_path, text, [torch.zeros(4)])
    assert source.count("static const") == 3
    np.testing.assert_array_equal(got[0], [1.0, 2.5, -3.0, 4.0])
    np.testing.assert_array_equal(got[2], [7, -1, 3])
    assert got[1].dtype == np.float16 and got[1].tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]]
