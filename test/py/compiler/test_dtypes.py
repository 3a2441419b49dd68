"""One dtype table (npu_mlir/hardware/dtypes.py): every other spelling of an element type agrees with it."""

from __future__ import annotations

from torch_mlir import ir

from npu_mlir.hardware.dtypes import BY_MLIR, DTYPES, SIM_TYPES, torch_dtype


def test_each_spelling_is_unique() -> None:
    for field in ("mlir", "torch", "c10"):
        names = [getattr(t, field) for t in DTYPES]
        assert len(names) == len(set(names)), field
    for t in DTYPES:
        assert torch_dtype(t).itemsize == t.bytes


def test_compiler_tables_come_from_it() -> None:
    from npu_mlir.targets.ascendc import emit
    from npu_mlir.targets.sim import abi, build

    assert abi.ELEMENT_BYTES == {t.mlir: t.bytes for t in SIM_TYPES}
    assert build.TORCH_TO_MLIR == {torch_dtype(t): t.mlir for t in SIM_TYPES}
    with ir.Context():
        assert emit.ctype(ir.F32Type.get()) == BY_MLIR["f32"].ascendc
        assert emit.ctype(ir.IntegerType.get_signless(1)) == BY_MLIR["i1"].ascendc


def test_the_eager_plan_agrees() -> None:
    from torch_npu.eager import plan

    assert plan.MLIR_TYPES == {torch_dtype(t): t.mlir for t in SIM_TYPES}
    assert {name: dtype for name, dtype in plan.DTYPE_NAMES.items()} == {t.c10: torch_dtype(t) for t in DTYPES}
