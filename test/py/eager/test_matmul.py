"""Matmul on npu vs CPU: odd sizes, transposed operands, batched and broadcast matmul,
float32 / float16 / bfloat16, all through compiled kernels (the cube path of the sim target).

Half-precision inputs are drawn representable in their dtype; the reference is the CPU product in
float32 rounded once (the kernels accumulate in float32, as torch's CPU kernels do), compared within
a few units in the last place of the largest value.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
import torch

from conftest import assert_no_fallback

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
# Error bound relative to the largest reference value (float32: K-term sums in another order).
REL_TOL = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def _inputs(*shapes: tuple[int, ...], dtype: torch.dtype) -> list[torch.Tensor]:
    torch.manual_seed(0)
    return [torch.randn(shape).to(dtype) for shape in shapes]


def _close(got: torch.Tensor, want: torch.Tensor, dtype: torch.dtype) -> None:
    assert got.device.type == "npu" and got.dtype == dtype and got.shape == want.shape
    scale = max(want.float().abs().max().item(), 1.0)
    torch.testing.assert_close(got.cpu().float(), want.float(), atol=REL_TOL[dtype] * scale, rtol=0)


def _reference(fn, tensors: list[torch.Tensor], dtype: torch.dtype) -> torch.Tensor:
    return fn(*(t.float() for t in tensors)).to(dtype)


@pytest.mark.parametrize("m,k,n,dtype", [(257, 511, 129, dtype) for dtype in DTYPES]
                         + [(1, 64, 33, torch.float32), (37, 1, 50, torch.bfloat16)])
def test_mm_odd_sizes(m: int, k: int, n: int, dtype: torch.dtype, eager_stats) -> None:
    a, b = _inputs((m, k), (k, n), dtype=dtype)
    _close(a.npu() @ b.npu(), _reference(torch.mm, [a, b], dtype), dtype)
    assert_no_fallback()


@pytest.mark.parametrize("layout,dtype", [("a_t", torch.float32), ("b_t", torch.float32), ("b_t", torch.float16),
                                          ("b_t", torch.bfloat16), ("both_t", torch.float32)])
def test_mm_transposed_operands(layout: str, dtype: torch.dtype, eager_stats) -> None:
    # Stored transposed, used as views: the kernel reads them in place (linear's weight.t()).
    a, b = _inputs((45, 70), (33, 45), dtype=dtype)  # a.t() is (70, 45), b.t() is (45, 33)
    x = a.t() if layout in ("a_t", "both_t") else a.t().contiguous()
    y = b.t() if layout in ("b_t", "both_t") else b.t().contiguous()
    _close(x.npu() @ y.npu(), _reference(torch.mm, [x, y], dtype), dtype)
    assert_no_fallback()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_bmm(dtype: torch.dtype, eager_stats) -> None:
    a, b = _inputs((3, 17, 31), (3, 31, 23), dtype=dtype)
    _close(torch.bmm(a.npu(), b.npu()), _reference(torch.bmm, [a, b], dtype), dtype)
    assert_no_fallback()


def test_bmm_transposed_b(eager_stats) -> None:
    # Attention's q @ k.transpose(-1, -2): the sim packs B's strided lanes once per block (widen_panels.py).
    q, k = _inputs((2, 4, 64, 32), (2, 4, 48, 32), dtype=torch.float32)
    _close(q.npu() @ k.npu().transpose(-1, -2), q @ k.transpose(-1, -2), torch.float32)
    assert_no_fallback()


@pytest.mark.parametrize("m,k,n,batch", [(33, 258, 96, None), (1, 64, 32, None), (9, 130, 48, 2)])
def test_bf16_k_pairs(m: int, k: int, n: int, batch: int | None, eager_stats) -> None:
    # Even K and 16-column register tiles: the shapes whose K pairs go through vdpbf16ps on a host
    # with AVX512-BF16 (targets/sim/bf16_dot.py); odd row counts leave partial register tiles.
    lead = () if batch is None else (batch,)
    a, b = _inputs(lead + (m, k), lead + (k, n), dtype=torch.bfloat16)
    _close(torch.matmul(a.npu(), b.npu()), _reference(torch.matmul, [a, b], torch.bfloat16), torch.bfloat16)
    assert_no_fallback()


@pytest.mark.parametrize("dtype", DTYPES)
def test_odd_sizes_split_over_blocks_with_a_tail(dtype: torch.dtype, tmp_path) -> None:
    # 127 rows and columns (a prime) have no divisor near the 24 blocks asked for (one block): the sim splits
    # one into aligned chunks and a shorter last one (schedule._block_chunk), peeled into a loop of its own.
    from npu_mlir.frontend import import_fx_graph
    from npu_mlir.targets.sim.build import SimTiling, compile_linalg, run_on_host

    a, b = _inputs((127, 33), (33, 127), dtype=dtype)
    kernel = compile_linalg(import_fx_graph(lambda x, y: x @ y, [a, b]).module, SimTiling(24), name="odd_mm",
                            cache_dir=tmp_path)
    assert kernel.block_dim >= 8
    (got,) = run_on_host(kernel, [a, b], threads=2)
    want = _reference(torch.mm, [a, b], dtype).float()
    torch.testing.assert_close(got.float(), want, atol=REL_TOL[dtype] * want.abs().max().item(), rtol=0)


def test_bf16_register_tiles_use_dot_products(tmp_path) -> None:
    bf16_dot = pytest.importorskip("npu_mlir.targets.sim.bf16_dot")
    if not bf16_dot.AVAILABLE or shutil.which("objdump") is None:
        pytest.skip("the host has no AVX512-BF16 (or no objdump to read the kernel)")
    from npu_mlir.frontend import import_fx_graph
    from npu_mlir.targets.sim.build import SimTiling, compile_linalg

    a, b = _inputs((16, 64), (64, 32), dtype=torch.bfloat16)
    kernel = compile_linalg(import_fx_graph(lambda x, y: x @ y, [a, b]).module, SimTiling(1), name="bf16_mm",
                            cache_dir=tmp_path)
    listing = subprocess.run(["objdump", "-d", kernel.so_path], capture_output=True, text=True, check=True).stdout
    assert "vdpbf16ps" in listing


@pytest.mark.parametrize("m,k,n,dtype", [(131, 77, 200, dtype) for dtype in DTYPES]
                         + [(40, 64, 1000, torch.bfloat16), (40, 64, 1000, torch.float16)])
def test_mm_remainder_parts(m: int, k: int, n: int, dtype: torch.dtype, eager_stats) -> None:
    # N not a multiple of 16 and M with no divisor of 4..8: the sim splits the product into whole
    # register tiles and remainder parts (targets/sim/schedule.remainder_splits); odd K for all dtypes.
    a, b = _inputs((m, k), (k, n), dtype=dtype)
    _close(a.npu() @ b.npu(), _reference(torch.mm, [a, b], dtype), dtype)
    assert_no_fallback()


def test_bf16_remainder_columns_keep_dot_products(tmp_path) -> None:
    # 1000 columns and K = 65: 992 columns in 32-lane register tiles through vdpbf16ps over K pairs,
    # the last 8 columns and the last K step in parts of their own (schedule.remainder_splits).
    bf16_dot = pytest.importorskip("npu_mlir.targets.sim.bf16_dot")
    if not bf16_dot.AVAILABLE or shutil.which("objdump") is None:
        pytest.skip("the host has no AVX512-BF16 (or no objdump to read the kernel)")
    from npu_mlir.frontend import import_fx_graph
    from npu_mlir.targets.sim.build import SimTiling, compile_linalg, run_on_host

    a, b = _inputs((16, 65), (65, 1000), dtype=torch.bfloat16)
    kernel = compile_linalg(import_fx_graph(lambda x, y: x @ y, [a, b]).module, SimTiling(1), name="bf16_mm",
                            cache_dir=tmp_path)
    listing = subprocess.run(["objdump", "-d", kernel.so_path], capture_output=True, text=True, check=True).stdout
    assert "vdpbf16ps" in listing
    (got,) = run_on_host(kernel, [a, b])
    want = _reference(torch.mm, [a, b], torch.bfloat16).float()
    torch.testing.assert_close(got.float(), want, atol=REL_TOL[torch.bfloat16] * want.abs().max().item(), rtol=0)


def test_half_matmul_scratch_reused_across_launches(eager_stats) -> None:
    # An f16 matmul widens its operands into scratch panels the kernel keeps between launches
    # (targets/sim/scratch.py): every launch, on either stream, still computes from its own inputs.
    torch.manual_seed(1)
    pairs = [(torch.randn(96, 80).half(), torch.randn(80, 64).half()) for _ in range(4)]
    side = torch.npu.Stream()
    results = []
    for n, (a, b) in enumerate(pairs):
        with torch.npu.stream(side if n % 2 else torch.npu.current_stream()):
            results.append(a.npu() @ b.npu())
    torch.npu.synchronize()
    for (a, b), got in zip(pairs, results):
        _close(got, _reference(torch.mm, [a, b], torch.float16), torch.float16)
    assert_no_fallback()
