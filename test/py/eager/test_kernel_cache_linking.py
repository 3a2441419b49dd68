"""Kernels built inside linking_together() (each compile worker request) share one .so."""

from __future__ import annotations

import pytest
import torch

from npu_mlir.frontend import import_aten_op
from npu_mlir.targets.sim import object as sim_object
from npu_mlir.targets.sim.build import SimTiling, compile_linalg, linking_together, run_on_host

pytestmark = pytest.mark.timeout(300)


def test_kernels_of_one_block_share_a_library_and_compute_as_alone(tmp_path):
    x = torch.randn(8, 33)
    exp = import_aten_op(torch.ops.aten.exp.default, (x,))
    mul = import_aten_op(torch.ops.aten.mul.Tensor, (x, 0.5))
    total = import_aten_op(torch.ops.aten.sum.dim_IntList, (x, [1]))
    # Each module defines an internal global of the same name (npu_sim_scratch_slots) and the same
    # allocation helpers: the merge keeps the globals apart per kernel and the helpers once.
    with linking_together():
        kernels = [compile_linalg(exp.module, SimTiling(2), name="exp", cache_dir=tmp_path),
                   compile_linalg(mul.module, SimTiling(2), name="mul", scalar_inputs=mul.scalar_inputs,
                                  cache_dir=tmp_path),
                   compile_linalg(total.module, SimTiling(2), name="sum", cache_dir=tmp_path)]
        again = compile_linalg(exp.module, SimTiling(2), name="exp", cache_dir=tmp_path)
        assert again is kernels[0]  # built once per block
    assert len({k.so_path for k in kernels}) == 1 and len({k.symbol for k in kernels}) == 3
    assert len(list(tmp_path.glob("*.so"))) == 1
    torch.testing.assert_close(run_on_host(kernels[0], [x])[0], torch.exp(x))
    torch.testing.assert_close(run_on_host(kernels[1], [x], scalars=[-2.5])[0], x * -2.5)
    torch.testing.assert_close(run_on_host(kernels[2], [x])[0], x.sum(1))
    # A later build of the same kernel (another request, another process) loads it from that library.
    cached = compile_linalg(mul.module, SimTiling(2), name="mul", scalar_inputs=mul.scalar_inputs, cache_dir=tmp_path)
    assert cached.from_cache and cached.so_path == kernels[1].so_path and cached.symbol == kernels[1].symbol


def test_a_large_copy_kernel_links_at_O0_with_vector_code_at_O3(tmp_path, monkeypatch):
    # One object file per -O level in the library; both carry the scratch helpers (scratch.py).
    monkeypatch.setattr(sim_object, "LARGE_KERNEL_OPS", 0)  # any kernel counts as large here
    levels, level_for = [], sim_object.opt_level_for
    monkeypatch.setattr(sim_object, "opt_level_for", lambda module, n: levels.append(level_for(module, n)) or levels[-1])
    x, y = torch.randn(8, 33), torch.randn(5, 33)
    cat = import_aten_op(torch.ops.aten.cat.default, ([x, y], 0))
    exp = import_aten_op(torch.ops.aten.exp.default, (x,))
    with linking_together():
        kernels = [compile_linalg(cat.module, SimTiling(2), name="cat", cache_dir=tmp_path),
                   compile_linalg(exp.module, SimTiling(2), name="exp", cache_dir=tmp_path)]
    assert levels == [0, sim_object.OPT_LEVEL]  # exp computes on vectors: it keeps -O3
    assert len({k.so_path for k in kernels}) == 1
    torch.testing.assert_close(run_on_host(kernels[0], [x, y])[0], torch.cat([x, y]))
    torch.testing.assert_close(run_on_host(kernels[1], [x])[0], torch.exp(x))
