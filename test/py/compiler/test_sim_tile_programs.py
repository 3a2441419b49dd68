"""The sim target built from ascend-lower-tiles' tile-level program, against torch and against the
build from the tiled kernel's tensor ops (targets/sim/kernel.py TILE_PROGRAM_KINDS).

Elementwise kernels take this path in the product. Row (rows split across UB tiles included) and
matmul programs are checked too, so their sim lowering (sim-lower-tile-ops) stays right until their
host speed lets them join the switch.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch_mlir import ir

from npu_mlir.dialects.ascend import load_ascend
from npu_mlir.frontend import import_fx_graph
from npu_mlir.pipeline import PipelineOptions, run_pipeline
from npu_mlir.targets.sim import kernel as sim_kernel
from npu_mlir.targets.sim.build import SimTiling, compile_linalg, run_on_host

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(autouse=True)
def kernel_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_NPU_KERNEL_CACHE", str(tmp_path))


def _record_value(kernel: ir.Operation, name: str) -> object:
    tiling = ir.DictAttr(kernel.attributes["tiling"])
    return ir.StringAttr(tiling[name]).value if name == "kind" else ir.IntegerAttr(tiling[name]).value


def _replay(fn, inputs, kinds: frozenset[str]):
    """(outputs, [(kind, built from the program?, block_dim)]) of fn's kernels run in launch order,
    each built from its tile-level program when its kind is in `kinds`."""
    text = str(import_fx_graph(fn, inputs).module)
    built = []
    with ir.Context(), ir.Location.unknown():
        load_ascend()
        module = ir.Module.parse(text)
        run_pipeline(module, PipelineOptions(from_torch=False, formats=False))
        main = next(op.operation for op in module.body.operations if op.operation.name == "func.func")
        kernels = sim_kernel.kernel_ops(module)
        values = list(zip(main.regions[0].blocks[0].arguments, inputs))
        lookup = lambda v: next(t for known, t in values if known == v)
        for op in main.regions[0].blocks[0].operations:
            if op.name == "ascend.launch":
                name = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
                kernel = kernels[name]
                program = sim_kernel.tile_program(kernel, kinds)
                if program is None:
                    compiled = sim_kernel.compile_ascend_kernel(kernel)
                else:
                    compiled = compile_linalg(f"module {{\n{program}\n}}", SimTiling(_record_value(kernel, "block_dim")),
                                              name=name)
                built.append((_record_value(kernel, "kind"), program is not None, compiled.block_dim))
                values.extend(zip(op.results, run_on_host(compiled, [lookup(v) for v in op.operands], threads=2)))
            elif op.name == "func.return":
                return [lookup(v) for v in op.operands], built
    raise AssertionError("no return")


CASES = {
    "elementwise_tail": (lambda x, y: torch.sigmoid(x) * y - torch.tanh(y), [torch.randn(1001, 3), torch.randn(1001, 3)]),
    "elementwise_tiles": (lambda x, y: x * y + 1, [torch.randn(300, 1000), torch.randn(300, 1000)]),
    "elementwise_f16": (lambda x, y: (x * y).exp(), [torch.randn(333, 77).half(), torch.randn(333, 77).half()]),
    "elementwise_bool": (lambda x, y: (x > y) & (y > 0), [torch.randn(100, 10), torch.randn(100, 10)]),
    "softmax": (lambda x: torch.softmax(x, -1), [torch.randn(32, 128)]),
    "layer_norm": (lambda x: F.layer_norm(x, (300,)), [torch.randn(77, 300)]),
    "row_broadcast": (lambda x, b: x * b + x.mean(-1, keepdim=True), [torch.randn(64, 96), torch.randn(96)]),
    "split_row_sum": (lambda x: (x.exp() * 2).sum(-1), [torch.randn(5, 70000)]),
    "split_row_mean_max": (lambda x: x.mean(-1) * 3 + x.amax(-1), [torch.randn(3, 70001)]),
    "matmul_epilogue": (lambda a, w, b: F.gelu(a @ w + b), [torch.randn(64, 96), torch.randn(96, 128), torch.randn(128)]),
    "matmul_odd": (lambda a, w: a @ w, [torch.randn(37, 29), torch.randn(29, 53)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_tile_program_matches_torch_and_the_tensor_build(case):
    fn, inputs = CASES[case]
    want = fn(*inputs)
    from_program, built = _replay(fn, inputs, frozenset({"elementwise", "row", "matmul"}))
    from_tensors, _ = _replay(fn, inputs, frozenset())
    tol = dict(rtol=2e-3, atol=2e-3) if inputs[0].dtype == torch.float16 else dict(rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(from_program[0], want, **tol)
    torch.testing.assert_close(from_program[0], from_tensors[0], **tol)
    assert any(program for _, program, _ in built), built  # some kernel of the case ran its program


def test_elementwise_kernels_run_their_program_on_the_records_blocks():
    # The product path: compile_ascend_kernel builds an elementwise kernel from its tile program,
    # launched on the tiling record's block_dim (the sim's own split would pick a divisor of a dim).
    assert "elementwise" in sim_kernel.TILE_PROGRAM_KINDS
    fn, inputs = lambda x: torch.sigmoid(x) * 2 - torch.tanh(x), [torch.randn(1001, 3)]
    text = str(import_fx_graph(fn, inputs).module)
    with ir.Context(), ir.Location.unknown():
        load_ascend()
        module = ir.Module.parse(text)
        run_pipeline(module, PipelineOptions(from_torch=False, formats=False))
        (kernel,) = sim_kernel.kernel_ops(module).values()
        assert sim_kernel.tile_program(kernel) is not None
        compiled = sim_kernel.compile_ascend_kernel(kernel)
        assert compiled.block_dim == _record_value(kernel, "block_dim") > 1
        torch.testing.assert_close(run_on_host(compiled, inputs)[0], fn(*inputs))
