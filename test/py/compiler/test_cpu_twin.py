"""AscendC emission checked by execution: emitted kernels built with g++ against the CPU twin.

Each test tiles a hand-written kernel (ascend-tile, ascend-plan-memory), emits its AscendC source,
compiles it with a small driver that runs every block (ICPU_RUN_KF, one host thread per block,
as CANN's CPU debug mode does) and compares the outputs with numpy.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from torch_mlir import ir

import npu_mlir
from npu_mlir.dialects.ascend import load_ascend
from npu_mlir.dialects.ascend.kernel_ops import LAUNCH_TYPE_RUNS, RESULT_TYPE_RUNS
from npu_mlir.passes import plan_memory, tile
from npu_mlir.targets.ascendc import emit as ascendc
from npu_mlir.tools import npu_ascendc

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ to build the CPU twin")
# One flag set for every build, so the precompiled twin header below applies to all of them.
CXXFLAGS = ["-std=c++17", "-O1", "-pthread", "-DASCENDC_CPU_DEBUG"]


def twin_include_dir() -> Path:
    """The twin with kernel_operator.h precompiled for CXXFLAGS (halves each kernel's compile time)."""
    return npu_ascendc.twin_include_dir(tuple(CXXFLAGS))

_NP = {"float": np.float32, "half": np.float16, "int32_t": np.int32}


def one_run(values: int = 1) -> str:
    """The attribute of an ascend.yield of `values` values of one type (a single run, kernel_ops)."""
    return f"{{operandSegmentSizes = array<i32: {values}" + ", 0" * (RESULT_TYPE_RUNS - 1) + ">}"


def kernel_ir(name: str, args: list[str], results: list[str], body: str, core: str = "aiv",
              fusion: str = "elementwise") -> str:
    params = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(args))
    ftype = f"({', '.join(args)}) -> ({', '.join(results)})"
    return (f'module {{\n  "ascend.kernel"() ({{\n  ^bb0({params}):\n{body}\n  }}) {{sym_name = "{name}", '
            f'function_type = {ftype}, core_type = "{core}", fusion = "{fusion}", block_dim = 1, tiling = {{}}}}'
            " : () -> ()\n}\n")


def build_and_run(tmp_path: Path, text: str, inputs: list[np.ndarray],
                  scalars: list[str] | None = None) -> tuple[list[np.ndarray], dict]:
    with ir.Context(), ir.Location.unknown():
        load_ascend()
        module = ir.Module.parse(text)
        assert tile.run(module.operation) is not False
        assert plan_memory.run(module.operation) is not False
        kernel = next(op for op in module.body.operations if op.name == "ascend.kernel")
        sig = ascendc.signature(kernel)
        source = ascendc.emit_module(module.operation)
        outs = [(ascendc.ctype(v.type), list(ir.RankedTensorType(v.type).shape)) for _, v in sig.outputs]
        init = ascendc.tiling_values(sig, scalars)
    n_in = len(inputs)
    gm = [f"(GM_ADDR)in{i}.data()" for i in range(n_in)] + [f"(GM_ADDR)out{i}.data()" for i in range(len(outs))]
    reads = "\n".join(f"  auto in{i} = Load(argv[{i + 1}]);" for i in range(n_in))
    allocs = "\n".join(f"  std::vector<uint8_t> out{i}({int(np.prod(s)) * np.dtype(_NP[t]).itemsize});"
                       for i, (t, s) in enumerate(outs))
    writes = "\n".join(f"  Store(argv[{n_in + 1 + i}], out{i});" for i in range(len(outs)))
    driver = f"""{source}
#include <fstream>
#include <iterator>
static std::vector<uint8_t> Load(const char* p) {{
  std::ifstream f(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {{}});
}}
static void Store(const char* p, const std::vector<uint8_t>& v) {{
  std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(v.data()), v.size());
}}
int main(int argc, char** argv) {{
  (void)argc;
{reads}
{allocs}
  {sig.name}_TilingData t = {init};
  ICPU_RUN_KF({sig.name}, t.block_dim, {", ".join(gm)}, (GM_ADDR)&t);
{writes}
  return 0;
}}
"""
    (tmp_path / "kernel.cpp").write_text(driver)
    exe = tmp_path / "kernel"
    subprocess.run(["g++", *CXXFLAGS, f"-I{twin_include_dir()}", str(tmp_path / "kernel.cpp"), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    in_files = []
    for i, a in enumerate(inputs):
        in_files.append(tmp_path / f"in{i}.bin")
        np.ascontiguousarray(a).tofile(in_files[-1])
    out_files = [tmp_path / f"out{i}.bin" for i in range(len(outs))]
    proc = subprocess.run([str(exe), *map(str, in_files), *map(str, out_files)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    results = [np.fromfile(f, dtype=_NP[t]).reshape(s) for f, (t, s) in zip(out_files, outs)]
    return results, sig.tiling


def test_elementwise_chain_f32_with_unaligned_tail(tmp_path):
    t = "tensor<1001x3xf32>"
    body = f"""    %c = arith.constant 0.5 : f32
    %0 = "ascend.binary"(%arg0, %arg1) {{kind = "add"}} : ({t}, {t}) -> {t}
    %1 = "ascend.unary"(%0) {{kind = "exp"}} : ({t}) -> {t}
    %2 = "ascend.binary"(%1, %c) {{kind = "mul"}} : ({t}, f32) -> {t}
    %3 = "ascend.binary"(%c, %2) {{kind = "sub"}} : (f32, {t}) -> {t}
    %4 = "ascend.unary"(%3) {{kind = "sigmoid"}} : ({t}) -> {t}
    "ascend.yield"(%4) {one_run()} : ({t}) -> ()"""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 1001, 3), dtype=np.float32)
    (out,), tiling = build_and_run(tmp_path, kernel_ir("chain", [t, t], [t], body), [a, b])
    want = 1 / (1 + np.exp(-(0.5 - np.exp(a + b) * 0.5)))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    assert tiling["block_dim"] > 1 and tiling["last_block_elems"] % 8 != 0  # the DataCopyPad tail ran


def test_scalar_kernel_argument_travels_in_tiling(tmp_path):
    t = "tensor<256xf32>"
    body = f"""    %0 = "ascend.binary"(%arg1, %arg0) {{kind = "div"}} : (f32, {t}) -> {t}
    %1 = "ascend.binary"(%0, %arg1) {{kind = "sub"}} : ({t}, f32) -> {t}
    "ascend.yield"(%1) {one_run()} : ({t}) -> ()"""
    x = np.random.default_rng(9).uniform(0.5, 2.0, 256).astype(np.float32)
    (out,), _ = build_and_run(tmp_path, kernel_ir("sdiv", [t, "f32"], [t], body), [x], scalars=["3.0f"])
    np.testing.assert_allclose(out, 3.0 / x - 3.0, rtol=1e-5, atol=1e-6)


def test_ternary_fma_lerp_clamp(tmp_path):
    t = "tensor<1000xf32>"
    body = f"""    %lo = arith.constant -0.5 : f32
    %hi = arith.constant 0.75 : f32
    %0 = "ascend.ternary"(%arg0, %arg1, %arg2) {{kind = "fma"}} : ({t}, {t}, {t}) -> {t}
    %1 = "ascend.ternary"(%0, %arg1, %arg2) {{kind = "lerp"}} : ({t}, {t}, {t}) -> {t}
    %2 = "ascend.ternary"(%1, %lo, %hi) {{kind = "clamp"}} : ({t}, f32, f32) -> {t}
    "ascend.yield"(%2) {one_run()} : ({t}) -> ()"""
    a, b, c = np.random.default_rng(11).standard_normal((3, 1000), dtype=np.float32)
    (out,), _ = build_and_run(tmp_path, kernel_ir("tern", [t, t, t], [t], body), [a, b, c])
    f = a * b + c
    np.testing.assert_allclose(out, np.clip(f + c * (b - f), -0.5, 0.75), rtol=1e-5, atol=1e-6)


def test_compare_select_masks(tmp_path):
    # relu backward (select(x > 0, g, 0)) and where(x < y, x, y): Compare bit masks feed Select.
    t, m = "tensor<4100xf32>", "tensor<4100xi1>"
    body = f"""    %zero = arith.constant 0.0 : f32
    %0 = "ascend.compare"(%arg0, %zero) {{predicate = "gt"}} : ({t}, f32) -> {m}
    %1 = "ascend.select"(%0, %arg1, %zero) : ({m}, {t}, f32) -> {t}
    %2 = "ascend.compare"(%arg0, %arg1) {{predicate = "lt"}} : ({t}, {t}) -> {m}
    %3 = "ascend.select"(%2, %arg0, %1) : ({m}, {t}, {t}) -> {t}
    "ascend.yield"(%3) {one_run()} : ({t}) -> ()"""
    x, g = np.random.default_rng(12).standard_normal((2, 4100), dtype=np.float32)
    (out,), _ = build_and_run(tmp_path, kernel_ir("masks", [t, t], [t], body), [x, g])
    relu_grad = np.where(x > 0, g, 0.0)
    np.testing.assert_array_equal(out, np.where(x < g, x, relu_grad).astype(np.float32))


def test_elementwise_f16_to_f32_cast_relu(tmp_path):
    t16, t32 = "tensor<64x1024xf16>", "tensor<64x1024xf32>"
    body = f"""    %0 = "ascend.binary"(%arg0, %arg1) {{kind = "mul"}} : ({t16}, {t16}) -> {t16}
    %1 = "ascend.unary"(%0) {{kind = "relu"}} : ({t16}) -> {t16}
    %2 = "ascend.cast"(%1) : ({t16}) -> {t32}
    "ascend.yield"(%2) {one_run()} : ({t32}) -> ()"""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 64, 1024)).astype(np.float16)
    (out,), tiling = build_and_run(tmp_path, kernel_ir("relu16", [t16, t16], [t32], body), [a, b])
    np.testing.assert_allclose(out, np.maximum(a * b, 0).astype(np.float32), rtol=1e-3, atol=1e-3)
    assert tiling["block_dim"] == 48


def test_row_reduction_sum_unaligned_rows(tmp_path):
    t, r = "tensor<77x300xf32>", "tensor<77xf32>"
    body = f"""    %0 = "ascend.reduce"(%arg0) {{kind = "sum", dims = array<i64: 1>, keepdim = false}} : ({t}) -> {r}
    "ascend.yield"(%0) {one_run()} : ({r}) -> ()"""
    x = np.random.default_rng(2).standard_normal((77, 300), dtype=np.float32)
    (out,), tiling = build_and_run(tmp_path, kernel_ir("rsum", [t], [r], body, fusion="reduction"), [x])
    np.testing.assert_allclose(out, x.sum(axis=1), rtol=1e-4, atol=1e-4)
    assert tiling["cols_aligned"] == 304 and tiling["block_dim"] > 1


def test_softmax_rows(tmp_path):
    t, r = "tensor<50x129xf32>", "tensor<50xf32>"
    body = f"""    %0 = "ascend.reduce"(%arg0) {{kind = "max", dims = array<i64: 1>, keepdim = false}} : ({t}) -> {r}
    %1 = "ascend.broadcast"(%0) {{dims = array<i64: 1>}} : ({r}) -> {t}
    %2 = "ascend.binary"(%arg0, %1) {{kind = "sub"}} : ({t}, {t}) -> {t}
    %3 = "ascend.unary"(%2) {{kind = "exp"}} : ({t}) -> {t}
    %4 = "ascend.reduce"(%3) {{kind = "sum", dims = array<i64: 1>, keepdim = false}} : ({t}) -> {r}
    %5 = "ascend.broadcast"(%4) {{dims = array<i64: 1>}} : ({r}) -> {t}
    %6 = "ascend.binary"(%3, %5) {{kind = "div"}} : ({t}, {t}) -> {t}
    "ascend.yield"(%6) {one_run()} : ({t}) -> ()"""
    x = np.random.default_rng(3).standard_normal((50, 129), dtype=np.float32) * 3
    (out,), _ = build_and_run(tmp_path, kernel_ir("softmax", [t], [t], body, fusion="reduction"), [x])
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_bias_broadcast_over_rows_then_mean(tmp_path):
    t, c, r = "tensor<40x24xf32>", "tensor<24xf32>", "tensor<40x1xf32>"
    body = f"""    %0 = "ascend.broadcast"(%arg1) {{dims = array<i64: 0>}} : ({c}) -> {t}
    %1 = "ascend.binary"(%arg0, %0) {{kind = "add"}} : ({t}, {t}) -> {t}
    %2 = "ascend.reduce"(%1) {{kind = "mean", dims = array<i64: 1>, keepdim = true}} : ({t}) -> {r}
    "ascend.yield"(%2) {one_run()} : ({r}) -> ()"""
    rng = np.random.default_rng(4)
    x, bias = rng.standard_normal((40, 24), dtype=np.float32), rng.standard_normal(24, dtype=np.float32)
    (m,), _ = build_and_run(tmp_path, kernel_ir("biasmean", [t, c], [r], body, fusion="reduction"), [x, bias])
    np.testing.assert_allclose(m, (x + bias).mean(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_two_outputs_layer_norm_parts(tmp_path):
    # y = x - mean(x) and its square, both written: a kernel with two outputs of one type.
    t, r = "tensor<64x96xf32>", "tensor<64xf32>"
    body = f"""    %0 = "ascend.reduce"(%arg0) {{kind = "mean", dims = array<i64: 1>, keepdim = false}} : ({t}) -> {r}
    %1 = "ascend.broadcast"(%0) {{dims = array<i64: 1>}} : ({r}) -> {t}
    %2 = "ascend.binary"(%arg0, %1) {{kind = "sub"}} : ({t}, {t}) -> {t}
    %3 = "ascend.binary"(%2, %2) {{kind = "mul"}} : ({t}, {t}) -> {t}
    "ascend.yield"(%2, %3) {one_run(2)} : ({t}, {t}) -> ()"""
    x = np.random.default_rng(7).standard_normal((64, 96), dtype=np.float32)
    (y, y2), _ = build_and_run(tmp_path, kernel_ir("center", [t], [t, t], body, fusion="reduction"), [x])
    want = x - x.mean(axis=1, keepdims=True)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y2, want * want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("m,k,n,dtype", [(100, 70, 90, "f32"), (33, 200, 17, "f16")])
def test_matmul(tmp_path, m, k, n, dtype):
    ta, tb, tc = f"tensor<{m}x{k}x{dtype}>", f"tensor<{k}x{n}x{dtype}>", f"tensor<{m}x{n}xf32>"
    body = f"""    %0 = "ascend.matmul"(%arg0, %arg1) {{acc_type = f32, transpose_a = false, transpose_b = false}} : ({ta}, {tb}) -> {tc}
    "ascend.yield"(%0) {one_run()} : ({tc}) -> ()"""
    np_t = np.float32 if dtype == "f32" else np.float16
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((m, k)).astype(np_t), rng.standard_normal((k, n)).astype(np_t)
    (out,), tiling = build_and_run(tmp_path, kernel_ir("mm", [ta, tb], [tc], body, core="aic", fusion="single"), [a, b])
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-3)
    assert tiling["block_dim"] > 1


# Each operand layout takes its own L1 -> L0 path: a [k, m] A and a [k, n] B are transposed per
# fractal on the way, an [n, k] B is copied plain (for fp32 too: L0B's nZ is an [n, k] NZ).
@pytest.mark.parametrize("ta,tb,dtype", [(True, True, "f16"), (False, True, "f32"), (True, False, "f16"), (True, False, "f32")])
def test_matmul_transposed_operands(tmp_path, ta, tb, dtype):
    m, k, n = 40, 72, 50
    a_shape, b_shape = ([k, m] if ta else [m, k]), ([n, k] if tb else [k, n])
    ta_t, tb_t = (f"tensor<{a_shape[0]}x{a_shape[1]}x{dtype}>", f"tensor<{b_shape[0]}x{b_shape[1]}x{dtype}>")
    tc = f"tensor<{m}x{n}xf32>"
    flags = f"transpose_a = {str(ta).lower()}, transpose_b = {str(tb).lower()}"
    body = f"""    %0 = "ascend.matmul"(%arg0, %arg1) {{acc_type = f32, {flags}}} : ({ta_t}, {tb_t}) -> {tc}
    "ascend.yield"(%0) {one_run()} : ({tc}) -> ()"""
    rng = np.random.default_rng(10)
    np_t = np.float16 if dtype == "f16" else np.float32
    a, b = rng.standard_normal(a_shape).astype(np_t), rng.standard_normal(b_shape).astype(np_t)
    (out,), _ = build_and_run(tmp_path, kernel_ir("mm_t", [ta_t, tb_t], [tc], body, core="aic", fusion="single"), [a, b])
    want = (a.T if ta else a).astype(np.float64) @ (b.T if tb else b).astype(np.float64)
    np.testing.assert_allclose(out, want, rtol=1e-3, atol=1e-2)


def test_batch_matmul_f16_out_aligned(tmp_path):
    # Fractal-aligned shapes: no K padding, whole 32-byte DataCopy moves.
    ta, tb, tc = "tensor<3x64x32xf16>", "tensor<3x32x48xf16>", "tensor<3x64x48xf16>"
    body = f"""    %0 = "ascend.batch_matmul"(%arg0, %arg1) {{acc_type = f32, transpose_a = false, transpose_b = false}} : ({ta}, {tb}) -> {tc}
    "ascend.yield"(%0) {one_run()} : ({tc}) -> ()"""
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((3, 64, 32)).astype(np.float16), rng.standard_normal((3, 32, 48)).astype(np.float16)
    (out,), _ = build_and_run(tmp_path, kernel_ir("bmm", [ta, tb], [tc], body, core="aic", fusion="single"), [a, b])
    np.testing.assert_allclose(out.astype(np.float32), (a.astype(np.float32) @ b.astype(np.float32)), rtol=2e-3, atol=2e-2)


def test_twin_rejects_unaligned_datacopy(tmp_path):
    # The twin must refuse what the hardware would get wrong, or it proves nothing.
    src = """#include "kernel_operator.h"
using namespace AscendC;
int main() {
  float x[7] = {};
  TPipe pipe;
  TQue<QuePosition::VECIN, 1> q;
  pipe.InitBuffer(q, 1, 64);
  GlobalTensor<float> g;
  g.SetGlobalBuffer(x, 7);
  LocalTensor<float> t = q.AllocTensor<float>();
  DataCopy(t, g, 7);
}
"""
    (tmp_path / "bad.cpp").write_text(src)
    subprocess.run(["g++", *CXXFLAGS, f"-I{twin_include_dir()}", str(tmp_path / "bad.cpp"), "-o", str(tmp_path / "bad")],
                   check=True)
    proc = subprocess.run([str(tmp_path / "bad")], capture_output=True, text=True)
    assert proc.returncode != 0 and "not a multiple of 32" in proc.stderr


def _runtime_library() -> Path | None:
    root = Path(npu_mlir.__file__).resolve().parents[2] / "build"
    libs = sorted(root.glob("**/libnpurt.a"), key=lambda p: p.stat().st_mtime)
    return libs[-1] if libs else None


def test_acl_host_code_runs_kernel_on_simulated_runtime(tmp_path):
    # The --emit-acl output, compiled with the kernel source and linked against the runtime:
    # aclrtMalloc / MemcpyAsync / LaunchKernel / RecordEvent / SynchronizeStream for real.
    lib = _runtime_library()
    if lib is None:
        pytest.skip("runtime library not built yet (make build or make test-runtime)")
    from npu_mlir.targets.ascendc import acl

    t = "tensor<4096x3xf32>"
    # Launch arguments and results are stored as runs of equal types (kernel_ops.LAUNCH_TYPE_RUNS
    # and RESULT_TYPE_RUNS groups).
    segments = "array<i32: 2" + ", 0" * (LAUNCH_TYPE_RUNS - 1) + ">"
    results = "array<i32: 1" + ", 0" * (RESULT_TYPE_RUNS - 1) + ">"
    text = kernel_ir("scaled", [t, t], [t], f"""    %c = arith.constant 1.5 : f32
    %0 = "ascend.binary"(%arg0, %arg1) {{kind = "max"}} : ({t}, {t}) -> {t}
    %1 = "ascend.binary"(%0, %c) {{kind = "mul"}} : ({t}, f32) -> {t}
    "ascend.yield"(%1) {one_run()} : ({t}) -> ()""").replace("\n}\n", f"""
  func.func @forward(%a: {t}, %b: {t}) -> {t} {{
    %0 = "ascend.launch"(%a, %b) {{callee = @scaled, operandSegmentSizes = {segments}, resultSegmentSizes = {results}}} : ({t}, {t}) -> {t}
    %1 = "ascend.launch"(%0, %b) {{callee = @scaled, operandSegmentSizes = {segments}, resultSegmentSizes = {results}}} : ({t}, {t}) -> {t}
    return %1 : {t}
  }}
}}
""")
    with ir.Context(), ir.Location.unknown():
        load_ascend()
        module = ir.Module.parse(text)
        assert tile.run(module.operation) is not False
        (tmp_path / "kernel.cpp").write_text(ascendc.emit_module(module.operation))
        (tmp_path / "host.cpp").write_text(acl.emit_module(module.operation))
    (tmp_path / "main.cpp").write_text("""#include <cstdio>
#include <fstream>
#include <vector>
#include "npurt/acl_rt.h"
extern "C" aclError forward_run(const void* const*, void* const*, int32_t, aclrtStream, float*);
int main(int, char** argv) {
  const size_t n = 4096 * 3;
  std::vector<float> a(n), b(n), out(n);
  std::ifstream(argv[1], std::ios::binary).read(reinterpret_cast<char*>(a.data()), n * 4);
  std::ifstream(argv[2], std::ios::binary).read(reinterpret_cast<char*>(b.data()), n * 4);
  float ms = -1.0f;
  aclrtStream stream = nullptr;
  if (aclrtGetStreamByIndex(0, 0, &stream) != ACL_SUCCESS) return 2;
  const void* ins[] = {a.data(), b.data()};
  void* outs[] = {out.data()};
  aclError err = forward_run(ins, outs, 0, stream, &ms);
  if (err != ACL_SUCCESS) { std::fprintf(stderr, "forward_run: %d %s\\n", err, aclGetRecentErrMsg()); return 1; }
  std::ofstream(argv[3], std::ios::binary).write(reinterpret_cast<const char*>(out.data()), n * 4);
  return ms >= 0.0f ? 0 : 3;
}
""")
    runtime_include = Path(npu_mlir.__file__).resolve().parents[2] / "runtime" / "include"
    exe = tmp_path / "forward"
    subprocess.run(["g++", *CXXFLAGS, f"-I{twin_include_dir()}", f"-I{runtime_include}",
                    *(str(tmp_path / f) for f in ("kernel.cpp", "host.cpp", "main.cpp")), str(lib), "-ldl",
                    "-o", str(exe)], check=True, capture_output=True, text=True)
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal((2, 4096, 3), dtype=np.float32)
    a.tofile(tmp_path / "a.bin")
    b.tofile(tmp_path / "b.bin")
    proc = subprocess.run([str(exe), str(tmp_path / "a.bin"), str(tmp_path / "b.bin"), str(tmp_path / "o.bin")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = np.fromfile(tmp_path / "o.bin", dtype=np.float32).reshape(4096, 3)
    np.testing.assert_allclose(out, np.maximum(np.maximum(a, b) * 1.5, b) * 1.5, rtol=1e-6)
