"""Kernels and their launches.

  "ascend.kernel"() ({ ^bb0(args): ... "ascend.yield"(results) })
      {sym_name, function_type, core_type, block_dim, fusion, tiling}
    A device kernel at module level, isolated from above: its body only uses its block arguments,
    so the emitters and the sim target can compile it alone. core_type is aiv (vector), aic (cube)
    or mix; fusion is the FUSION_KINDS group that `ascend-fuse` outlined; block_dim and tiling
    (a dictionary: the tiling record) are filled in by `ascend-tile` (1 and {} before it).
  "ascend.launch"(args) {callee = @kernel} -> results
    Runs a kernel from host code; operand and result types match the kernel's function_type.
"""

# No `from __future__ import annotations`: ext reads op fields from live annotations.

from collections.abc import Sequence
from typing import Any

from torch_mlir import ir
from torch_mlir.dialects.ext import Operand, Region, Result, attribute

from .dialect import AscendOp
from ...errors import NOT_SUPPORTED, CompilerError


class LaunchArgumentsError(CompilerError, ValueError):
    """A launch whose arguments need more runs of equal types than the op stores."""

    code = NOT_SUPPORTED

CORE_TYPES = ("aiv", "aic", "mix")
# opaque: a body of upstream (linalg / tensor) ops the ascend dialect does not model yet.
FUSION_KINDS = ("single", "elementwise", "reduction", "matmul_epilogue", "conv", "opaque")


# IRDL binds every value of one variadic group to a single type, so heterogeneous values are
# stored as several groups, one per run of equal types, sized by `operandSegmentSizes` /
# `resultSegmentSizes` (the builders compute them): a launch's arguments in up to
# LAUNCH_TYPE_RUNS groups, a kernel's results (a yield's values, a launch's results) in up to
# RESULT_TYPE_RUNS (a value + index reduction yields two types; one of avg_pool2d_backward's
# opaque groups nine).
LAUNCH_TYPE_RUNS = 24
RESULT_TYPE_RUNS = 16


def segment_sizes(types: Sequence, runs_allowed: int, op: str, what: str) -> list[int]:
    """The lengths of `types`' runs of equal types (ir.Types or their text), padded with empty
    groups to `runs_allowed`."""
    runs: list[int] = []
    for i, t in enumerate(types):
        if i and t == types[i - 1]:
            runs[-1] += 1
        else:
            runs.append(1)
    if len(runs) > runs_allowed:
        raise LaunchArgumentsError(f"{op} takes at most {runs_allowed} runs of {what} types, got {len(runs)}")
    return runs + [0] * (runs_allowed - len(runs))


def _segments(types: Sequence[ir.Type], runs_allowed: int, op: str, what: str) -> ir.DenseI32ArrayAttr:
    return ir.DenseI32ArrayAttr.get(segment_sizes(types, runs_allowed, op, what))


def _one() -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 1)


def _no_tiling() -> ir.DictAttr:
    return ir.DictAttr.get({})


class KernelOp(AscendOp, name="kernel", traits=[ir.IsIsolatedFromAboveTrait]):
    sym_name: ir.StringAttr
    function_type: ir.TypeAttr
    core_type: ir.StringAttr
    fusion: ir.StringAttr
    block_dim: ir.IntegerAttr = attribute(default_factory=_one)
    tiling: ir.DictAttr = attribute(default_factory=_no_tiling)
    body: Region

    @property
    def type(self) -> ir.FunctionType:
        return ir.FunctionType(ir.TypeAttr(self.attributes["function_type"]).value)

    def check(self):
        if (core := self.attr_str("core_type")) not in CORE_TYPES:
            return f"unknown core_type '{core}'; expected one of {', '.join(CORE_TYPES)}"
        if (fusion := self.attr_str("fusion")) not in FUSION_KINDS:
            return f"unknown fusion '{fusion}'; expected one of {', '.join(FUSION_KINDS)}"
        if self.attr_int("block_dim") < 1:
            return "block_dim must be at least 1"
        if len(self.body.blocks) != 1:
            return "body must have exactly one block"
        block = self.body.blocks[0]
        if [a.type for a in block.arguments] != list(self.type.inputs):
            return "block argument types differ from function_type inputs"
        ops = list(block.operations)
        if not ops or ops[-1].name != "ascend.yield":
            return "body must end with ascend.yield"
        if [v.type for v in ops[-1].operands] != list(self.type.results):
            return "yielded types differ from function_type results"
        return None


class YieldOp(AscendOp, name="yield", traits=[ir.IsTerminatorTrait]):
    values0: Sequence[Operand[Any]]  # the class body's first annotation creates __annotations__
    for _i in range(1, RESULT_TYPE_RUNS):
        __annotations__[f"values{_i}"] = Sequence[Operand[Any]]
    del _i

    def __init__(self, values: Sequence[ir.Value], *, loc: ir.Location | None = None,
                 ip: ir.InsertionPoint | None = None):
        segments = _segments([v.type for v in values], RESULT_TYPE_RUNS, "an ascend.yield", "values")
        ir.OpView.__init__(self, self.OPERATION_NAME, self._ODS_REGIONS, None, None,
                           attributes={"operandSegmentSizes": segments}, results=[], operands=list(values),
                           successors=None, regions=None, loc=loc, ip=ip)

    @property
    def values(self) -> list[ir.Value]:
        return list(self.operation.operands)

    def check(self):
        parent = self.operation.parent
        if parent is None or parent.name != "ascend.kernel":
            return "must be the terminator of an ascend.kernel"
        return None


def find_kernel(op: ir.Operation, name: str) -> ir.OpView | None:
    """Return the ascend.kernel named `name` in the module enclosing `op`."""
    module = op.parent
    while module is not None and module.name != "builtin.module":
        module = module.parent
    if module is None:
        return None
    for candidate in module.regions[0].blocks[0].operations:
        if candidate.name == "ascend.kernel" and ir.StringAttr(candidate.attributes["sym_name"]).value == name:
            return candidate
    return None


class LaunchOp(AscendOp, name="launch"):
    callee: ir.FlatSymbolRefAttr
    for _i in range(RESULT_TYPE_RUNS):
        __annotations__[f"outs{_i}"] = Sequence[Result[Any]]
    for _i in range(LAUNCH_TYPE_RUNS):
        __annotations__[f"args{_i}"] = Sequence[Operand[Any]]
    del _i

    def __init__(self, callee: ir.FlatSymbolRefAttr, args: Sequence[ir.Value],
                 result_types: Sequence[ir.Type], *, loc: ir.Location | None = None,
                 ip: ir.InsertionPoint | None = None):
        attributes = {"callee": callee,
                      "operandSegmentSizes": _segments([v.type for v in args], LAUNCH_TYPE_RUNS, "a launch", "argument"),
                      "resultSegmentSizes": _segments(list(result_types), RESULT_TYPE_RUNS, "a launch", "result")}
        ir.OpView.__init__(self, self.OPERATION_NAME, self._ODS_REGIONS, None, None,
                           attributes=attributes, results=list(result_types), operands=list(args), successors=None,
                           regions=None, loc=loc, ip=ip)

    @property
    def args(self) -> list[ir.Value]:
        return list(self.operation.operands)

    def check(self):
        name = ir.FlatSymbolRefAttr(self.attributes["callee"]).value
        kernel = find_kernel(self.operation, name)
        if kernel is None:
            return f"calls @{name}, which is not an ascend.kernel in this module"
        ftype = kernel.type
        if [v.type for v in self.operation.operands] != list(ftype.inputs):
            return f"operand types differ from the inputs of @{name}"
        if [v.type for v in self.operation.results] != list(ftype.results):
            return f"result types differ from the results of @{name}"
        return None
