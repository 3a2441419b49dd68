"""Every kernel a compiled eager record launches carries its AscendC and ACL source (issue #9 item 4).

A fixed set of calls across the kernel kinds (elementwise in each float dtype and f64, row and
split-row reductions, value+index reductions, gathers, scans, concat, matmul with and without an
epilogue in f32 / f16 / bf16, convolution as a GEMM, pooling, norms and their backward, constant
results) is planned as the dispatcher plans it and built as the compile worker builds it. Each
launch of each record must carry tiled MLIR, AscendC and ACL source, or an `ascendc_error` naming
one of the known gaps below. The list shrinks as the emitters close gaps: a reason not on it
fails the test, and so does a listed gap none of the calls hits any more (then delete it).
"""

from __future__ import annotations

import re

import pytest
import torch

from npu_mlir.frontend import kernel_build
from npu_mlir.targets.sim.cache import cache_root
from torch_npu.eager.plan import DTYPE_NAMES, SCALAR_TYPES, plan_call

# Known gaps: reason pattern -> the calls below that hit it. Empty when every kernel has AscendC.
KNOWN_GAPS: dict[str, set[str]] = {}

_C10 = {dtype: name for name, dtype in DTYPE_NAMES.items()}
ND = 2


def _describe(arg):
    """An argument as the eager dispatcher describes it to plan_call."""
    if isinstance(arg, torch.Tensor):
        return ("T", _C10[arg.dtype], list(arg.shape), list(arg.stride()), ND)
    if isinstance(arg, torch.dtype):
        return SCALAR_TYPES.index(arg)
    if isinstance(arg, (list, tuple)) and any(isinstance(a, torch.Tensor) for a in arg):
        return [_describe(a) for a in arg]
    return arg


def _arguments(op: str, args: list) -> list:
    """`args` described, then the schema's defaults for the rest (the dispatcher passes every argument)."""
    schema = kernel_build.resolve_op(op)._schema.arguments
    given = [_describe(a) for a in args]
    return given + [a.default_value if a.has_default_value() else None for a in schema[len(given):]]


def t(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.empty(shape, dtype=dtype)


def i64(*shape: int) -> torch.Tensor:
    return torch.zeros(shape, dtype=torch.int64)


F16, BF16, F64 = torch.float16, torch.bfloat16, torch.float64
CALLS: dict[str, tuple[str, list]] = {
    # elementwise
    "add": ("aten::add.Tensor", [t(32, 64), t(32, 64), 2]),
    "mul_scalar": ("aten::mul.Tensor", [t(32, 64), 0.5]),
    "exp_f16": ("aten::exp", [t(40, 24, dtype=F16)]),
    "gelu_bf16": ("aten::gelu", [t(16, 48, dtype=BF16)]),
    "sigmoid": ("aten::sigmoid", [t(24, 40)]),
    "tanh_f64": ("aten::tanh", [t(8, 16, dtype=F64)]),
    "exp_f64": ("aten::exp", [t(8, 16, dtype=F64)]),
    "where": ("aten::where.self", [torch.empty(16, 8, dtype=torch.bool), t(16, 8), t(16, 8)]),
    "broadcast_div": ("aten::div.Tensor", [t(16, 32), t(32)]),
    "cast_f16": ("aten::_to_copy", [t(16, 32), F16]),  # dtype is kwarg-only: first after self
    # reductions
    "sum_rows": ("aten::sum.dim_IntList", [t(16, 64), [1]]),
    "sum_split_rows": ("aten::sum.dim_IntList", [t(3, 70000), [1]]),
    "sum_leading": ("aten::sum.dim_IntList", [t(16, 64), [0]]),
    "amax_bf16": ("aten::amax", [t(8, 96, dtype=BF16), [1]]),
    "softmax": ("aten::_softmax", [t(8, 128), 1, False]),
    "softmax_split_rows": ("aten::_softmax", [t(2, 70000), 1, False]),  # intermediates in the GM workspace
    "log_softmax_f16": ("aten::_log_softmax", [t(8, 64, dtype=F16), 1, False]),
    "layer_norm": ("aten::native_layer_norm", [t(8, 64), [64], t(64), t(64), 1e-5]),
    "layer_norm_backward": ("aten::native_layer_norm_backward",
                            [t(8, 64), t(8, 64), [64], t(8, 1), t(8, 1), t(64), t(64), [True, True, True]]),
    "var": ("aten::var.correction", [t(8, 64), [1]]),
    # value + index, gathers, scans, concat, pooling
    "max_dim": ("aten::max.dim", [t(16, 32), 1]),
    "argmax": ("aten::argmax", [t(16, 32), 1]),
    "gather": ("aten::gather", [t(16, 32), 1, i64(16, 5)]),
    "index_select": ("aten::index_select", [t(16, 32), 0, i64(6)]),
    "embedding": ("aten::embedding", [t(50, 16), i64(4, 7)]),
    "cumsum": ("aten::cumsum", [t(8, 32), 1]),
    "cat": ("aten::cat", [[t(16, 32), t(3, 32)]]),
    "max_pool2d": ("aten::max_pool2d_with_indices", [t(1, 2, 7, 9), [3, 3], [2, 2], [1, 1]]),
    # cube
    "mm": ("aten::mm", [t(64, 32), t(32, 48)]),
    "mm_transposed": ("aten::mm", [t(64, 32), t(48, 32).t()]),
    "addmm_f16": ("aten::addmm", [t(48, dtype=F16), t(32, 64, dtype=F16), t(64, 48, dtype=F16)]),
    "bmm_bf16": ("aten::bmm", [t(2, 32, 16, dtype=BF16), t(2, 16, 32, dtype=BF16)]),
    "linear_3d": ("aten::linear", [t(2, 8, 32), t(48, 32), t(48)]),
    "conv2d": ("aten::convolution", [t(2, 4, 8, 8), t(8, 4, 3, 3), t(8), [1, 1], [1, 1], [1, 1], False, [0, 0], 1]),
    # constant results
    "zeros": ("aten::zeros", [[4, 8]]),
    "full": ("aten::full", [[4, 8], 1.5]),
}


def _reasons(call: str) -> list[str]:
    """The gap patterns listed for `call`."""
    return [pattern for pattern, calls in KNOWN_GAPS.items() if call in calls]


@pytest.fixture(scope="module")
def records() -> dict[str, dict]:
    built = {}
    for name, (op, args) in CALLS.items():
        plan = plan_call(op, _arguments(op, args), 8)
        # The shared kernel folder: a .so built before by the same compiler is reused.
        built[name] = kernel_build.build(dict(plan.request, cache_dir=str(cache_root())))
    return built


@pytest.mark.parametrize("call", sorted(CALLS))
def test_every_kernel_carries_ascendc_and_acl(records, call):
    record = records[call]
    assert record["path"] == "pipeline"
    assert len(record["sources"]) == len(record["launches"]) >= 1
    for source in record["sources"]:
        if source["ascendc"] is None:
            allowed = _reasons(call)
            assert any(re.search(p, source["ascendc_error"]) for p in allowed), \
                f"{call}: kernel @{source['kernel']} has no AscendC: {source['ascendc_error']}"
            continue
        assert "tiling" in source["tiled_mlir"], source["kernel"]
        assert f"void {source['kernel']}(" in source["ascendc"] and "__aicore__" in source["ascendc"]
        assert "aclrtLaunchKernel" in source["acl"] and f"{source['kernel']}_launch(" in source["acl"]


def test_every_known_gap_is_still_hit(records):
    # A gap the emitters closed leaves the list, so the list says what is left.
    for pattern, calls in KNOWN_GAPS.items():
        hit = [c for c in calls if any(s["ascendc"] is None and re.search(pattern, s["ascendc_error"])
                                       for s in records[c]["sources"])]
        assert hit, f"no call hits the known gap {pattern!r} any more: remove it from KNOWN_GAPS"
