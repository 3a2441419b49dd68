"""AscendC kernels written as kernel authors write them, built by npu-ascendc and run on the
simulated device through ACL host code (`kernel<<<blockDim, nullptr, stream>>>`), each compared
with numpy: mask / repeat vector forms, TBuf and scalar access, reductions, compare / select /
gather, basic-API cube matmuls with and without a transposed B, a 1 cube : 2 vector mix kernel,
atomics with SyncAll, and the synchronization and assertion failures the twin must report.

All kernels live in programs/kernels.cpp, programs/cube_kernels.cpp (img2col convolutions, the
bias table, asc_fill_l1, Fixpipe to L1), programs/c_api_compare_kernels.cpp,
programs/sort_kernels.cpp and programs/img2col_kernels.cpp (img2col into L0B, transposed, repeated), built once into one program (npu-ascendc caches the executable).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from npu_mlir.tools import npu_ascendc

PROGRAMS = Path(__file__).parent / "programs"
pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ to build against the CPU twin")


def _source_line(marker: str, source: str = "kernels.cpp") -> int:
    lines = (PROGRAMS / source).read_text().splitlines()
    return next(i + 1 for i, ln in enumerate(lines) if marker in ln)


@pytest.fixture(scope="module")
def kernels() -> Path:
    try:
        return npu_ascendc.build([PROGRAMS / f for f in ("kernels.cpp", "cube_kernels.cpp", "c_api_compare_kernels.cpp",
                                                                       "sort_kernels.cpp", "img2col_kernels.cpp")])
    except npu_ascendc.BuildError as exc:
        if "not built" in str(exc):
            pytest.skip(str(exc))
        raise


def run(exe: Path, tmp: Path, name: str, block_dim: int, inputs: list[np.ndarray],
        outputs: list[tuple[int, np.dtype]], check: bool = True) -> tuple[list[np.ndarray], subprocess.CompletedProcess]:
    args = [str(exe), name, str(block_dim)]
    for i, a in enumerate(inputs):
        np.ascontiguousarray(a).tofile(tmp / f"in{i}.bin")
        args.append(f"in:{tmp / f'in{i}.bin'}")
    for i, (n, dt) in enumerate(outputs):
        args.append(f"out:{n * np.dtype(dt).itemsize}:{tmp / f'out{i}.bin'}")
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if check:
        assert proc.returncode == 0, proc.stderr
    outs = [np.fromfile(tmp / f"out{i}.bin", dtype=dt) if check else None for i, (_, dt) in enumerate(outputs)]
    return outs, proc


def test_vector_mask_and_repeat_forms(kernels, tmp_path):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 256), dtype=np.float32)
    (z,), _ = run(kernels, tmp_path, "vec_mask", 1, [x, y], [(5 * 256, np.float32)])
    z = z.reshape(5, 256)
    lane = np.arange(256) % 64
    want = np.full((5, 256), -1.0, np.float32)
    want[0, lane < 40] = (x + y)[lane < 40]                      # continuous mask 40
    want[1, lane % 2 == 1] = (x * y)[lane % 2 == 1]              # bit mask, odd lanes
    blocks = x.reshape(-1, 8)                                    # src block stride 2, repeat stride 16
    want[2, :128] = np.concatenate([blocks[[r * 16 + j * 2 for j in range(8)]].ravel() for r in range(2)]) + 100
    want[3, lane < 8] = np.exp(x)[lane < 8]                      # SetVectorMask, isSetMask = false
    want[4, :100] = (x - y)[:100]                                # counter mode
    np.testing.assert_allclose(z, want, rtol=1e-6, atol=1e-6)


def test_reductions_tbuf_and_scalar_access(kernels, tmp_path):
    x = np.random.default_rng(1).standard_normal((8, 64), dtype=np.float32)
    (stats, rows), _ = run(kernels, tmp_path, "reduce_stats", 1, [x], [(32, np.float32), (512, np.float32)])
    np.testing.assert_allclose(stats[0], x.sum(), rtol=1e-5)
    assert stats[1] == x.max() and stats[2:3].view(np.uint32)[0] == x.argmax()
    assert stats[3] == x[:, :32].min()                           # ReduceMin, mask 32 x 8 repeats
    np.testing.assert_allclose(stats[8:16], x.sum(axis=1), rtol=1e-5, atol=1e-5)        # WholeReduceSum
    np.testing.assert_allclose(stats[16:24], x[:, :50].sum(axis=1), rtol=1e-5, atol=1e-5)  # Sum
    np.testing.assert_allclose(rows.reshape(8, 64), np.repeat(x.sum(axis=1, keepdims=True), 64, 1),
                               rtol=1e-5, atol=1e-5)             # BroadCast


def test_compare_select_gather(kernels, tmp_path):
    rng = np.random.default_rng(2)
    x, y = rng.standard_normal((2, 256), dtype=np.float32)
    (z,), _ = run(kernels, tmp_path, "cmp_select", 1, [x, y], [(648, np.float32)])
    np.testing.assert_array_equal(z[:256], np.maximum(x, 0))
    np.testing.assert_array_equal(z[256:512], np.minimum(x, y))
    np.testing.assert_array_equal(z[512:640], x[::2])
    assert z[640] == 128


@pytest.mark.parametrize("name", ["matmul_nn", "matmul_nt"])
def test_cube_matmul_basic_api(kernels, tmp_path, name):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((48, 64)).astype(np.float16)
    b = rng.standard_normal((64, 32) if name == "matmul_nn" else (32, 64)).astype(np.float16)
    (c,), _ = run(kernels, tmp_path, name, 1, [a, b], [(48 * 32, np.float32)])
    bb = b if name == "matmul_nn" else b.T
    np.testing.assert_allclose(c.reshape(48, 32), a.astype(np.float64) @ bb.astype(np.float64), rtol=1e-4, atol=1e-4)


def test_fixpipe_nd_num_splits_the_output(kernels, tmp_path):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((48, 64)).astype(np.float16), rng.standard_normal((64, 32)).astype(np.float16)
    (c,), _ = run(kernels, tmp_path, "matmul_split_nd", 1, [a, b], [(48 * 32, np.float32)])
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.reshape(2, 48, 16), np.stack([want[:, :16], want[:, 16:]]), rtol=1e-4, atol=1e-4)


def test_fixpipe_to_nz_layout(kernels, tmp_path):
    # CFG_NZ: no NZ2ND, C lands as [N / 16][M][16], dstStride 32-byte blocks between column groups.
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((48, 64)).astype(np.float16), rng.standard_normal((64, 32)).astype(np.float16)
    (c,), _ = run(kernels, tmp_path, "matmul_nz_out", 1, [a, b], [(48 * 32, np.float32)])
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.reshape(2, 48, 16), want.reshape(48, 2, 16).transpose(1, 0, 2), rtol=1e-4, atol=1e-4)


def _int8_operands():
    rng = np.random.default_rng(5)
    a = rng.integers(-128, 128, (32, 64), dtype=np.int8)
    b = rng.integers(-128, 128, (64, 32), dtype=np.int8)
    return a, b, a.astype(np.int64) @ b.astype(np.int64)


def _scale_words(scales: np.ndarray) -> np.ndarray:
    # AscendC's quant-scale word: a float's bits in the low 32 bits of a uint64.
    return scales.astype(np.float32).view(np.uint32).astype(np.uint64)


def test_int8_matmul_accumulates_exactly_in_int32(kernels, tmp_path):
    a, b, want = _int8_operands()
    (c,), _ = run(kernels, tmp_path, "matmul_i8_s32", 1, [a, b, np.zeros(32, np.uint64)], [(32 * 32, np.int32)])
    np.testing.assert_array_equal(c.reshape(32, 32), want)


@pytest.mark.parametrize("name", ["matmul_i8_deq", "matmul_i8_vdeq", "matmul_i8_vdeq_fb", "matmul_i8_req"])
def test_int8_matmul_fixpipe_dequantizes(kernels, tmp_path, name):
    a, b, acc = _int8_operands()
    per_channel = np.linspace(1 / 128, 1 / 16, 32).astype(np.float32)
    out_dtype = np.int8 if name == "matmul_i8_req" else np.float16
    (c,), _ = run(kernels, tmp_path, name, 1, [a, b, _scale_words(per_channel)], [(32 * 32, out_dtype)])
    if name == "matmul_i8_req":   # REQ8: int32 * 1/256, rounded to nearest even, saturated to int8
        want = np.clip(np.rint(acc * np.float32(1 / 256)), -128, 127).astype(np.int8)
        np.testing.assert_array_equal(c.reshape(32, 32), want)
        return
    scale = per_channel if name.startswith("matmul_i8_vdeq") else np.float32(1 / 64)   # VDEQF16: one scale per column
    np.testing.assert_allclose(c.reshape(32, 32).astype(np.float64), (acc * scale).astype(np.float16), rtol=1e-3)


@pytest.mark.parametrize("name", ["matmul_api_all", "matmul_api_iter"])
def test_high_level_matmul_api(kernels, tmp_path, name):
    # matmul::Matmul with a TCubeTiling, two cores of 32 rows each, base blocks 32 x 16 (N = 40: a tail of 8).
    rng = np.random.default_rng(6)
    a = rng.standard_normal((64, 48)).astype(np.float16)
    b = rng.standard_normal((48, 40) if name == "matmul_api_all" else (40, 48)).astype(np.float16)
    bias = rng.standard_normal(40).astype(np.float32)
    (c,), _ = run(kernels, tmp_path, name, 2, [a, b, bias], [(64 * 40, np.float32)])
    bb = b if name == "matmul_api_all" else b.T
    want = a.astype(np.float64) @ bb.astype(np.float64) + (bias if name == "matmul_api_all" else 0)
    np.testing.assert_allclose(c.reshape(64, 40), want, rtol=1e-4, atol=1e-4)


def test_c_api_kernel(kernels, tmp_path):
    # asc_simd.h: pointer-based copies and vector ops, count and repeat (vector mask) forms, two cores.
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal((2, 1024), dtype=np.float32)
    (z, w), _ = run(kernels, tmp_path, "c_api_kernel", 2, [x, y], [(1024, np.float32), (1024, np.float32)])
    np.testing.assert_allclose(z, np.exp(x) * 2 + y, rtol=1e-6, atol=1e-6)
    lane = np.arange(1024) % 64
    np.testing.assert_allclose(w, np.where(lane < 40, x + y, y), rtol=1e-6, atol=1e-6)


def test_c_api_missing_synchronization_is_reported(kernels, tmp_path):
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal((2, 1024), dtype=np.float32)
    _, proc = run(kernels, tmp_path, "c_api_missing_sync", 1, [x, y], [(1024, np.float32), (1024, np.float32)],
                  check=False)
    assert proc.returncode != 0
    # Located at the kernel's asc_exp line, naming the instruction (the class API's Exp) and the missing flag.
    assert f"kernels.cpp:{_source_line('asc_exp(zu, xu, N)')}: Exp (PIPE_V) reads UB" in proc.stderr, proc.stderr
    assert "written by asc_copy_gm2ub (PIPE_MTE2)" in proc.stderr and "MTE2_V" in proc.stderr


def test_c_api_conversions_reductions_gather_atomics(kernels, tmp_path):
    rng = np.random.default_rng(5)
    x = rng.standard_normal(1024).astype(np.float32)
    perm = np.concatenate([rng.permutation(512), rng.permutation(512)])
    off = (perm * 4).astype(np.uint32)  # byte offsets into the core's own slice of x
    outs = [(1024, np.float32), (1024, np.int32), (16, np.float32), (128, np.float32), (1024, np.float32),
            (512, np.float32)]
    (conv, ints, rsum, bmax, gath, total), _ = run(kernels, tmp_path, "c_api_vector_ops", 2, [x, off], outs)
    np.testing.assert_array_equal(conv, x.astype(np.float16).astype(np.float32))
    np.testing.assert_array_equal(ints, np.floor(x).astype(np.int32))
    np.testing.assert_allclose(rsum, x.reshape(16, 64).sum(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(bmax, x.reshape(128, 8).max(axis=1))
    np.testing.assert_array_equal(gath, x[perm + np.repeat([0, 512], 512)])
    np.testing.assert_allclose(total, x[:512] + x[512:], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["c_api_cube_matmul", "c_api_cube_matmul_bt"])
def test_c_api_cube_matmul(kernels, tmp_path, name):
    # asc_cube.h: L1 / L0 arrays, ND -> NZ into L1, L1 -> L0A / L0B (transposing load for a plain B,
    # plain load for B^T), two asc_mmad over the halves of k (the second accumulating), NZ -> ND out.
    rng = np.random.default_rng(11)
    a = rng.standard_normal((32, 64)).astype(np.float16)
    b = rng.standard_normal((64, 48)).astype(np.float16)
    given = b.T if name.endswith("_bt") else b
    (c,), _ = run(kernels, tmp_path, name, 1, [a, given], [(32 * 48, np.float32)])
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.reshape(32, 48), want, rtol=1e-4, atol=1e-3)


def test_c_api_cube_missing_synchronization_is_reported(kernels, tmp_path):
    rng = np.random.default_rng(11)
    a = rng.standard_normal((32, 64)).astype(np.float16)
    b = rng.standard_normal((64, 48)).astype(np.float16)
    _, proc = run(kernels, tmp_path, "c_api_cube_missing_sync", 1, [a, b], [(32 * 48, np.float32)], check=False)
    assert proc.returncode != 0
    line = _source_line("asc_mmad(c_l0, a_l0, b_l0, M, KH, N")
    assert f"kernels.cpp:{line}: Mmad (PIPE_M) reads L0A" in proc.stderr, proc.stderr
    assert "written by LoadData (PIPE_MTE1)" in proc.stderr and "MTE1_M" in proc.stderr


def _conv_reference(x: np.ndarray, w: np.ndarray, stride: int, dilation: int, pad: int) -> np.ndarray:
    """[Ho * Wo][Co] of the convolution of x [H][W][C] with w [Co][C][3][3], in float64."""
    h, wd, _ = x.shape
    xp = np.pad(x.astype(np.float64), ((pad, pad), (pad, pad), (0, 0)))
    ho, wo = (h + 2 * pad - dilation * 2 - 1) // stride + 1, (wd + 2 * pad - dilation * 2 - 1) // stride + 1
    out = np.zeros((ho, wo, w.shape[0]))
    for kh in range(3):
        for kw in range(3):
            win = xp[kh * dilation:kh * dilation + stride * (ho - 1) + 1:stride,
                     kw * dilation:kw * dilation + stride * (wo - 1) + 1:stride]
            out += win @ w[:, :, kh, kw].astype(np.float64).T
    return out.reshape(ho * wo, -1)


def _fractal_z(w: np.ndarray) -> np.ndarray:
    """w [Co][C][Kh][Kw] as the cube's [K][Co] weight, k = ((c1 * Kh + kh) * Kw + kw) * 16 + c0."""
    co, c, kh, kw = w.shape
    return w.reshape(co, c // 16, 16, kh, kw).transpose(1, 3, 4, 2, 0).reshape(c * kh * kw, co)


@pytest.mark.parametrize("name", ["conv_bias", "conv_strided", "c_api_conv"])
def test_img2col_convolution_on_the_cube(kernels, tmp_path, name):
    # Load3Dv2 into L0A (class API, and the C API's 3D asc_copy_l12l0a), the FRACTAL_Z weight through
    # the transposing load, Mmad (from the bias table for conv_bias, two k halves for conv_strided).
    shape, stride, dilation, pad = ((9, 9), 2, 2, 2) if name == "conv_strided" else ((6, 7), 1, 1, 1)
    rng = np.random.default_rng(8)
    x = rng.standard_normal((*shape, 32)).astype(np.float16)
    w = rng.standard_normal((32, 32, 3, 3)).astype(np.float16)
    bias = rng.standard_normal(32).astype(np.float32)
    want = _conv_reference(x, w, stride, dilation, pad)
    inputs = [x, _fractal_z(w)] + ([bias] if name != "c_api_conv" else [])
    (y,), _ = run(kernels, tmp_path, name, 1, inputs, [(want.size, np.float32)])
    want += bias if name == "conv_bias" else 0
    np.testing.assert_allclose(y.reshape(want.shape), want, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("name", ["matmul_chain", "c_api_matmul_chain"])
def test_fixpipe_to_l1_feeds_the_next_matmul(kernels, tmp_path, name):
    # Fixpipe (class API) / asc_copy_l0c2l1 (C API) from L0C to L1 as half NZ, the next Mmad's A.
    rng = np.random.default_rng(12)
    a, b, e = (rng.standard_normal((32, 32)).astype(np.float16) for _ in range(3))
    (d,), _ = run(kernels, tmp_path, name, 1, [a, b, e], [(32 * 32, np.float32)])
    p = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float16)  # F322F16 on the way into L1
    np.testing.assert_allclose(d.reshape(32, 32), p.astype(np.float64) @ e.astype(np.float64), rtol=1e-3, atol=1e-2)


def test_missing_fixpipe_to_load_flag_is_reported(kernels, tmp_path):
    z = np.zeros(32 * 32, np.float16)
    _, proc = run(kernels, tmp_path, "matmul_chain_no_flag", 1, [z, z, z], [(32 * 32, np.float32)], check=False)
    assert proc.returncode != 0
    assert "reads L1" in proc.stderr and "written by Fixpipe (PIPE_FIX)" in proc.stderr, proc.stderr
    assert "FIX_MTE1" in proc.stderr


def test_bias_table_read_without_synchronization_is_reported(kernels, tmp_path):
    z16, z32 = np.zeros(6 * 7 * 32, np.float16), np.zeros(32, np.float32)
    _, proc = run(kernels, tmp_path, "conv_bias_unordered", 1, [z16, np.zeros(288 * 32, np.float16), z32],
                  [(42 * 32, np.float32)], check=False)
    assert proc.returncode != 0
    line = _source_line("MMAD_WITH_BIAS", "cube_kernels.cpp")
    assert f"cube_kernels.cpp:{line}: Mmad (PIPE_M) reads BT" in proc.stderr, proc.stderr
    assert "(PIPE_MTE1)" in proc.stderr and "MTE1_M" in proc.stderr


@pytest.mark.parametrize("name", ["conv_positions_as_n", "c_api_conv_positions_as_n", "conv_repeat_rows"])
def test_img2col_into_l0b_and_by_repeats(kernels, tmp_path, name):
    # Load3Dv2 into L0B (each output position a column of B: Y = W * img2col^T, [Co][Ho * Wo]), in
    # both APIs; and into L0A 16 rows per iteration of the repeat registers (Y = img2col * W).
    rng = np.random.default_rng(21)
    x = rng.standard_normal((6, 7, 32)).astype(np.float16)
    w = rng.standard_normal((32, 32, 3, 3)).astype(np.float16)
    want = _conv_reference(x, w, 1, 1, 1)  # [Ho * Wo][Co]
    positions_as_n = name != "conv_repeat_rows"
    weight = np.ascontiguousarray(_fractal_z(w).T) if positions_as_n else _fractal_z(w)
    (y,), _ = run(kernels, tmp_path, name, 1, [x, weight], [(want.size, np.float32)])
    want = want.T if positions_as_n else want
    np.testing.assert_allclose(y.reshape(want.shape), want, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("name", ["conv_weight_grad", "conv_weight_grad_t"])
def test_img2col_transposed_gives_the_weight_gradient(kernels, tmp_path, name):
    # dW = dY * img2col: the img2col matrix transposed into L0B (output positions along K), or
    # dW^T = img2col^T * dY^T with it transposed into L0A (window columns along M).
    rng = np.random.default_rng(22)
    x = rng.standard_normal((6, 7, 32)).astype(np.float16)
    dy = rng.standard_normal((32, 42)).astype(np.float16)  # [Co][Ho * Wo]
    xp = np.pad(x.astype(np.float64), ((1, 1), (1, 1), (0, 0)))
    # img2col [Ho * Wo][K] in FRACTAL_Z's column order k = ((c1 * 3 + kh) * 3 + kw) * 16 + c0.
    cols = np.stack([xp[kh:kh + 6, kw:kw + 7, :] for kh in range(3) for kw in range(3)], axis=2)  # [6][7][9][32]
    img2col = cols.reshape(42, 9, 2, 16).transpose(0, 2, 1, 3).reshape(42, 288)
    want = dy.astype(np.float64) @ img2col
    if name == "conv_weight_grad_t":
        dy, want = np.ascontiguousarray(dy.T), want.T
    (dw,), _ = run(kernels, tmp_path, name, 1, [x, dy], [(32 * 288, np.float32)])
    np.testing.assert_allclose(dw.reshape(want.shape), want, rtol=1e-3, atol=1e-2)


def test_c_api_bias_table_starts_the_matmul(kernels, tmp_path):
    # asc_copy_l12bt widens the half bias into the bias table; asc_mmad with c_matrix_source adds it.
    rng = np.random.default_rng(23)
    a, b = rng.standard_normal((16, 32)).astype(np.float16), rng.standard_normal((32, 32)).astype(np.float16)
    bias = rng.standard_normal(32).astype(np.float16)
    (c,), _ = run(kernels, tmp_path, "c_api_matmul_bias", 1, [a, b, bias], [(16 * 32, np.float32)])
    want = a.astype(np.float64) @ b.astype(np.float64) + bias.astype(np.float64)
    np.testing.assert_allclose(c.reshape(16, 32), want, rtol=1e-3, atol=1e-3)


def test_c_api_bias_table_read_without_synchronization_is_reported(kernels, tmp_path):
    z = np.zeros(32 * 32, np.float16)
    _, proc = run(kernels, tmp_path, "c_api_matmul_bias_unordered", 1, [z[:16 * 32], z, z[:32]],
                  [(16 * 32, np.float32)], check=False)
    assert proc.returncode != 0
    line = _source_line("C_API_MMAD_WITH_BIAS", "cube_kernels.cpp")
    assert f"cube_kernels.cpp:{line}: Mmad (PIPE_M) reads BT" in proc.stderr, proc.stderr
    assert "(PIPE_MTE1)" in proc.stderr and "MTE1_M" in proc.stderr


def test_img2col_of_a_four_channel_map(kernels, tmp_path):
    # channelSize 4 < C0: the map stays [H][W][4], the img2col columns run (kh, kw, c), 36 padded to 48.
    rng = np.random.default_rng(17)
    x = rng.standard_normal((6, 8, 4)).astype(np.float16)
    w = rng.standard_normal((32, 4, 3, 3)).astype(np.float16)
    w_k = np.zeros((48, 32), np.float16)
    w_k[:36] = w.transpose(2, 3, 1, 0).reshape(36, 32)   # row (kh * 3 + kw) * 4 + c
    (y,), _ = run(kernels, tmp_path, "c_api_conv_c4", 1, [x, w_k], [(48 * 32, np.float32)])
    np.testing.assert_allclose(y.reshape(48, 32), _conv_reference(x, w, 1, 1, 1), rtol=1e-3, atol=1e-3)


def test_c_api_fill_l1_and_l0a(kernels, tmp_path):
    b = np.random.default_rng(9).standard_normal((32, 32)).astype(np.float16)
    (c,), _ = run(kernels, tmp_path, "c_api_fill_matmul", 1, [b], [(16 * 32, np.float32)])
    want = np.repeat(1.5 * b.astype(np.float64).sum(axis=0, keepdims=True), 16, axis=0)
    np.testing.assert_allclose(c.reshape(16, 32), want, rtol=1e-4, atol=1e-3)


def test_c_api_per_channel_quantization_from_the_fixpipe_buffer(kernels, tmp_path):
    rng = np.random.default_rng(15)
    a, b = rng.standard_normal((16, 32)).astype(np.float16), rng.standard_normal((32, 32)).astype(np.float16)
    scales = np.linspace(2.0, 20.0, 32).astype(np.float32)
    (c,), _ = run(kernels, tmp_path, "c_api_quant_matmul", 1, [a, b, _scale_words(scales)], [(16 * 32, np.int8)])
    acc = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float32)
    want = np.clip(np.rint(acc.astype(np.float64) * scales), -128, 127).astype(np.int8)
    assert np.abs(c.reshape(16, 32).astype(int) - want).max() <= 1   # float accumulation order may move a .5


def test_c_api_compare_and_select(kernels, tmp_path):
    rng = np.random.default_rng(10)
    x, y = rng.standard_normal((2, 256), dtype=np.float32)
    x[::7] = y[::7]  # ties
    pattern = rng.integers(0, 256, 32, dtype=np.uint8)
    outs = [(32, np.uint8), (32, np.uint8), (256, np.float32), (256, np.float32), (32, np.uint8)]
    (lt, gt, z, w, ge0), _ = run(kernels, tmp_path, "c_api_compare_select", 1, [x, y, pattern], outs)
    np.testing.assert_array_equal(np.unpackbits(ge0, bitorder="little").astype(bool), x >= 0.25)
    np.testing.assert_array_equal(np.unpackbits(lt, bitorder="little").astype(bool), x < y)
    first = np.unpackbits(gt[:8], bitorder="little").astype(bool)          # 64 lanes of one repeat
    np.testing.assert_array_equal(first, x[:64] > y[:64])
    np.testing.assert_array_equal(z, np.where(np.tile(first, 4), x, y))    # the same bits for every repeat
    picked = np.unpackbits(pattern[:8], bitorder="little").astype(bool)
    np.testing.assert_array_equal(w, np.where(np.tile(picked, 4), x, y))


def _proposals(raw: np.ndarray, score_dtype) -> tuple[np.ndarray, np.ndarray]:
    """(scores, indices) of 8-byte region proposals: the score in the low bytes, the uint32 index in the high 4."""
    words = raw.view(np.uint8).reshape(-1, 8)
    return words[:, :np.dtype(score_dtype).itemsize].copy().view(score_dtype).ravel(), words[:, 4:].copy().view(np.uint32).ravel()


def test_sort32_and_merge_sort(kernels, tmp_path):
    rng = np.random.default_rng(13)
    x = rng.permutation(128).astype(np.float32) - 64.0   # distinct scores
    idx = (np.arange(128) + 1000).astype(np.uint32)
    (srt, part, counts), _ = run(kernels, tmp_path, "sort_merge", 1, [x, idx],
                                 [(256, np.float32), (80, np.float32), (8, np.float32)])
    order = np.argsort(-x, kind="stable")
    scores, indices = _proposals(srt, np.float32)
    np.testing.assert_array_equal(scores, x[order])
    np.testing.assert_array_equal(indices, idx[order])
    # Queue 0 = repeat 0's 32 sorted, queue 1 = the first 8 of repeat 1's: the merge stops when queue 1 runs out.
    q0, q1 = x[:32][np.argsort(-x[:32], kind="stable")], x[32:64][np.argsort(-x[32:64], kind="stable")][:8]
    took1 = counts[1].astype(int)
    assert took1 == 8 and counts[0] == np.sum(q0 > q1[-1])
    got, _ = _proposals(part[:2 * (int(counts[0]) + took1)], np.float32)
    np.testing.assert_array_equal(got, np.sort(np.concatenate([q0[:int(counts[0])], q1]))[::-1])


def test_c_api_bitsort_and_mrgsort4(kernels, tmp_path):
    rng = np.random.default_rng(14)
    x = (rng.permutation(64).astype(np.float16) - np.float16(32)) / np.float16(4)
    idx = np.arange(64, dtype=np.uint32)
    (srt,), _ = run(kernels, tmp_path, "c_api_sort", 1, [x, idx], [(64 * 4, np.float16)])
    scores, indices = _proposals(srt, np.float16)
    order = np.argsort(-x.astype(np.float32), kind="stable")
    np.testing.assert_array_equal(scores, x[order])
    np.testing.assert_array_equal(indices, idx[order])


def test_high_level_matmul_api_misuse_is_reported(kernels, tmp_path):
    z = np.zeros(64 * 48, np.float16)
    _, proc = run(kernels, tmp_path, "matmul_api_no_b", 1, [z, z, np.zeros(40, np.float32)], [(64 * 40, np.float32)],
                  check=False)
    assert proc.returncode != 0
    assert f"kernels.cpp:{_source_line('mm.IterateAll(cGm);')}: Matmul::Iterate before SetTensorB" in proc.stderr, proc.stderr


def test_cube_l0b_needs_the_transposing_load(kernels, tmp_path):
    # A [k, n] B loaded into L0B without ifTranspose is wrong on a 910B, and so on the twin.
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((48, 64)).astype(np.float16), rng.standard_normal((64, 32)).astype(np.float16)
    (c,), _ = run(kernels, tmp_path, "matmul_nn_flipped", 1, [a, b], [(48 * 32, np.float32)])
    assert np.abs(c.reshape(48, 32) - a.astype(np.float64) @ b.astype(np.float64)).max() > 1.0


def test_mix_kernel_one_cube_two_vector(kernels, tmp_path):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((48, 64)).astype(np.float16), rng.standard_normal((64, 32)).astype(np.float16)
    (_, out), _ = run(kernels, tmp_path, "mix_matmul_relu", 1, [a, b], [(48 * 32, np.float32), (48 * 32, np.float32)])
    want = np.maximum(a.astype(np.float64) @ b.astype(np.float64), 0) + 0.5
    np.testing.assert_allclose(out.reshape(48, 32), want, rtol=1e-4, atol=1e-4)


def test_cross_core_flag_modes_1_and_0(kernels, tmp_path):
    # Two mix groups: mode 1 orders the two AIVs of a group, mode 0 every AIV of the launch.
    x = np.random.default_rng(16).standard_normal(32, dtype=np.float32)
    outs = [(32, np.float32), (32, np.float32), (32, np.float32)]
    (ws, pair, far), _ = run(kernels, tmp_path, "cross_core_modes", 2, [x], outs)
    blocks = (10 * x).reshape(4, 8)
    np.testing.assert_array_equal(ws.reshape(4, 8), blocks)
    np.testing.assert_array_equal(pair.reshape(4, 8), blocks[[1, 0, 3, 2]])
    np.testing.assert_array_equal(far.reshape(4, 8), blocks[[2, 3, 0, 1]])


def test_mix_one_to_one_group_handshake(kernels, tmp_path):
    x = np.arange(8, dtype=np.float32)
    (y,), _ = run(kernels, tmp_path, "mix11_handshake", 1, [x], [(8, np.float32)])
    np.testing.assert_array_equal(y, x + 1)


def test_atomic_add_and_sync_all(kernels, tmp_path):
    x = np.random.default_rng(5).standard_normal(512, dtype=np.float32)
    (total,), _ = run(kernels, tmp_path, "atomic_total", 8, [x], [(16, np.float32)])
    np.testing.assert_allclose(total[0], x.sum(), rtol=1e-5)
    np.testing.assert_allclose(total[8], 2 * x.sum(), rtol=1e-5)


def test_static_tensors_from_local_mem_allocator(kernels, tmp_path):
    x = np.random.default_rng(6).standard_normal(4 * 64, dtype=np.float32)
    (y,), _ = run(kernels, tmp_path, "static_scale", 4, [x], [(4 * 64, np.float32)])
    np.testing.assert_array_equal(y, 3 * x)


def test_missing_synchronization_is_reported(kernels, tmp_path):
    x = np.arange(64, dtype=np.float32)
    _, proc = run(kernels, tmp_path, "missing_sync", 1, [x], [(64, np.float32)], check=False)
    assert proc.returncode != 0
    line = _source_line("MISSING_SYNC_LINE")
    assert f"kernels.cpp:{line}: Muls (PIPE_V) reads UB" in proc.stderr, proc.stderr
    assert f"DataCopy (PIPE_MTE2) at {PROGRAMS / 'kernels.cpp'}:{line - 1}" in proc.stderr
    assert "SetFlag/WaitFlag<HardEvent::MTE2_V>" in proc.stderr


def test_missing_write_after_read_synchronization_is_reported(kernels, tmp_path):
    x = np.arange(128, dtype=np.float32)
    _, proc = run(kernels, tmp_path, "missing_war_sync", 1, [x], [(128, np.float32)], check=False)
    assert proc.returncode != 0
    assert f"kernels.cpp:{_source_line('MISSING_WAR_LINE')}: DataCopy (PIPE_MTE2) overwrites UB" in proc.stderr
    assert "still being read by DataCopy (PIPE_MTE3)" in proc.stderr and "HardEvent::MTE3_MTE2" in proc.stderr


def test_missing_global_memory_synchronization_is_reported(kernels, tmp_path):
    _, proc = run(kernels, tmp_path, "missing_gm_sync", 1, [np.arange(64, dtype=np.float32)], [(64, np.float32)],
                  check=False)
    assert proc.returncode != 0
    assert f"kernels.cpp:{_source_line('MISSING_GM_LINE')}: DataCopy (PIPE_MTE2) reads global memory that DataCopy " \
           "(PIPE_MTE3)" in proc.stderr, proc.stderr
    assert "HardEvent::MTE3_MTE2" in proc.stderr


def test_wait_without_set_is_reported_as_a_hang(kernels, tmp_path):
    _, proc = run(kernels, tmp_path, "unmatched_wait", 1, [np.zeros(8, np.float32)], [], check=False)
    assert proc.returncode != 0
    assert (f"kernels.cpp:{_source_line('UNMATCHED_WAIT_LINE')}: WaitFlag<HardEvent::MTE2_V>(3) with no SetFlag "
            "before it: the core would hang") in proc.stderr, proc.stderr


def test_printf_and_ascendc_assert(kernels, tmp_path):
    _, proc = run(kernels, tmp_path, "assert_and_print", 2, [np.zeros(8, np.float32)], [], check=False)
    assert proc.returncode != 0
    assert "[AIV 0] block 0 of 2" in proc.stdout
    assert "ascendc_assert(GetBlockIdx() < 1) failed on AIV 1: block 1 has no work" in proc.stderr


def test_worked_example_from_the_readme(tmp_path):
    # The README's commands, as typed: `npu-ascendc run leaky_add.cpp` (one file with its ACL host
    # program) and `npu-ascendc build ... -o app`, then the built program.
    cli = [sys.executable, "-m", "npu_mlir.tools.npu_ascendc"]
    proc = subprocess.run([*cli, "run", str(PROGRAMS / "leaky_add.cpp")], capture_output=True, text=True, timeout=300)
    if "not built" in proc.stderr:
        pytest.skip(proc.stderr)
    assert proc.returncode == 0, proc.stderr
    assert "leaky_add: 0 of 16384 elements wrong" in proc.stdout
    app = tmp_path / "app"
    proc = subprocess.run([*cli, "build", str(PROGRAMS / "leaky_add.cpp"), "-o", str(app)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([str(app)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "0 of 16384 elements wrong" in proc.stdout, proc.stderr


def test_launch_rewrite_reports_bad_syntax():
    with pytest.raises(npu_ascendc.BuildError, match="ERR03001 .*needs <<<blockDim, l2ctrl, stream>>>"):
        npu_ascendc.rewrite_launches("k<<<8, s>>>(x);", [])
    src = 'extern "C" __global__ __mix__(1, 2) void k(GM_ADDR x) {}'
    assert "MIX_MODE" in npu_ascendc.rewrite_launches("k<<<1, nullptr, s>>>(x);", [src])
