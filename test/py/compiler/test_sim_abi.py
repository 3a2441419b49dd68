"""The simulated-device kernel ABI: slot layout, scalar parameters, symbols, caching, errors."""

from __future__ import annotations

import ctypes

import pytest
import torch

from npu_mlir.frontend import FrontendError, import_aten_op, import_fx_graph
from npu_mlir.targets.sim.build import (SYMBOL_PREFIX, CompiledKernel, SimTiling, compile_linalg, pack_args,
                                         run_on_host)
from npu_mlir.errors import SimCompileError

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def kernel_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_NPU_KERNEL_CACHE", str(tmp_path))


def test_scalar_is_a_parameter_not_a_constant():
    x = torch.randn(16, 32)
    graph = import_aten_op(torch.ops.aten.mul.Tensor, (x, 0.5))
    assert graph.scalar_inputs == (1,) and graph.inputs == (0, 1)
    kernel = compile_linalg(graph.module, SimTiling(4), name="mul", scalar_inputs=graph.scalar_inputs)
    assert kernel.scalars == ("f64",)
    for lr in (0.5, -3.25, 1e-3):
        (out,) = run_on_host(kernel, [x], scalars=[lr])
        torch.testing.assert_close(out, x * lr)


def test_int_scalar_parameter_and_alpha():
    x = torch.randint(-9, 9, (8, 8), dtype=torch.int64)
    graph = import_aten_op(torch.ops.aten.add.Tensor, (x, 7))
    kernel = compile_linalg(graph.module, name="addi", scalar_inputs=graph.scalar_inputs)
    assert kernel.scalars == ("i64",)
    torch.testing.assert_close(run_on_host(kernel, [x], scalars=[-4])[0], x - 4)


@pytest.mark.parametrize("op,args,new_values", [
    (torch.ops.aten.clamp.default, (-0.5, 0.5), (-0.1, 0.2)),       # Scalar? -> clamp.Tensor
    (torch.ops.aten.mul.Scalar, (3.0,), (-7.0,)),                     # mul.Scalar -> mul.Tensor
    (torch.ops.aten.pow.Tensor_Scalar, (2.0,), (0.5,)),               # -> pow.Tensor_Tensor
])
def test_scalar_typed_arguments_become_parameters(op, args, new_values):
    x = torch.rand(8, 16) + 0.1
    graph = import_aten_op(op, (x, *args))
    assert len(graph.scalar_inputs) == len(args)
    kernel = compile_linalg(graph.module, name="p", scalar_inputs=graph.scalar_inputs)
    for values in (args, new_values):
        torch.testing.assert_close(run_on_host(kernel, [x], scalars=values)[0], op(x, *values))


def test_structural_arguments_stay_constants():
    x = torch.randn(4, 6)
    assert import_aten_op(torch.ops.aten.sum.dim_IntList, (x, [1])).scalar_inputs == ()
    graph = import_aten_op(torch.ops.aten.cat.default, ([x, x], 1))
    assert graph.scalar_inputs == () and len(graph.inputs) == 2
    kernel = compile_linalg(graph.module, name="cat")
    torch.testing.assert_close(run_on_host(kernel, [x, x])[0], torch.cat([x, x], 1))


def test_scalar_that_changes_dtype_stays_constant():
    x = torch.arange(6, dtype=torch.int32)
    graph = import_aten_op(torch.ops.aten.mul.Tensor, (x, 0.5))
    assert graph.scalar_inputs == ()
    kernel = compile_linalg(graph.module, name="muli")
    torch.testing.assert_close(run_on_host(kernel, [x])[0], x * 0.5)


def test_slot_layout_inputs_outputs_then_scalars():
    """Call the exported function directly with a hand-packed slot array, as the runtime does."""
    x, y = torch.randn(8, 16), torch.randn(8, 16)
    graph = import_aten_op(torch.ops.aten.add.Tensor, (x, y), {"alpha": 2})
    kernel = compile_linalg(graph.module, SimTiling(2), name="add")
    out = torch.empty(8, 16)
    slots = (ctypes.c_uint64 * 3)(x.data_ptr(), y.data_ptr(), out.data_ptr())
    fn = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32)(kernel.address())
    assert kernel.block_dim == 2
    assert fn(slots, 0, 2) == 0
    torch.testing.assert_close(out[:4], (x + 2 * y)[:4])
    assert fn(ctypes.addressof(pack_args(kernel, [x, y], [out], [])), 1, 2) == 0
    torch.testing.assert_close(out, x + 2 * y)


def test_symbol_is_prefixed_and_cache_is_reused():
    x = torch.randn(4, 4)
    graph = import_aten_op(torch.ops.aten.exp.default, (x,))
    first = compile_linalg(graph.module, name="exp")
    assert first.symbol.startswith(SYMBOL_PREFIX + "exp") and not first.from_cache
    again = compile_linalg(graph.module, name="exp")
    assert again.from_cache and again.so_path == first.so_path
    torch.testing.assert_close(run_on_host(again, [x])[0], torch.exp(x))


def test_kernel_description_round_trips_through_json():
    """A compile worker hands the kernel to the user process as JSON; the .so is loaded there."""
    xt = torch.randn(6, 4).t()
    graph = import_aten_op(torch.ops.aten.mul.Tensor, (xt, 2.0))
    kernel = compile_linalg(graph.module, name="w", scalar_inputs=graph.scalar_inputs,
                            input_strides=[tuple(xt.stride()), None])
    loaded = CompiledKernel.from_json(kernel.to_json())
    assert loaded.inputs == kernel.inputs and loaded.outputs == kernel.outputs and loaded.scalars == ("f64",)
    torch.testing.assert_close(run_on_host(loaded, [xt], scalars=[-1.5])[0], xt * -1.5)


def test_wrong_input_is_rejected_with_code():
    graph = import_fx_graph(lambda a: a + 1, [torch.randn(4, 4)])
    kernel = compile_linalg(graph.module, name="plus")
    with pytest.raises(SimCompileError, match="ERR03001"):
        run_on_host(kernel, [torch.randn(4, 5)])
    with pytest.raises(SimCompileError, match="ERR03001.*strides"):
        run_on_host(kernel, [torch.randn(4, 4).t()])


def test_dynamic_shape_is_rejected():
    text = """func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> { return %a : tensor<?xf32> }"""
    with pytest.raises(SimCompileError, match="ERR03007.*dynamic"):
        compile_linalg(text)


def test_bad_scalar_marking_is_rejected():
    graph = import_fx_graph(lambda a: a + 1, [torch.randn(4)])
    with pytest.raises(SimCompileError, match="ERR03001.*scalar"):
        compile_linalg(graph.module, scalar_inputs=[0])


def test_frontend_error_has_code():
    with pytest.raises(FrontendError, match="ERR03007"):
        import_fx_graph(lambda a: torch.linalg.eigh(a)[0], [torch.randn(4, 4)])
