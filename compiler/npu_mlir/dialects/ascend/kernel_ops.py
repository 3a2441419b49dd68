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
    values: Sequence[Operand[Any]]

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


# IRDL binds every value of one variadic group to a single type, so a launch's heterogeneous
# arguments are stored as up to LAUNCH_TYPE_RUNS groups, one per run of equal types, sized by
# `operandSegmentSizes` (the builder computes it). Results are one group: outlined kernels
# return values of a single type.
LAUNCH_TYPE_RUNS = 24


class LaunchOp(AscendOp, name="launch"):
    callee: ir.FlatSymbolRefAttr
    outs: Sequence[Result[Any]]
    for _i in range(LAUNCH_TYPE_RUNS):
        __annotations__[f"args{_i}"] = Sequence[Operand[Any]]
    del _i

    def __init__(self, callee: ir.FlatSymbolRefAttr, args: Sequence[ir.Value],
                 result_types: Sequence[ir.Type], *, loc: ir.Location | None = None,
                 ip: ir.InsertionPoint | None = None):
        runs: list[int] = []
        for i, v in enumerate(args):
            if i and v.type == args[i - 1].type:
                runs[-1] += 1
            else:
                runs.append(1)
        if len(runs) > LAUNCH_TYPE_RUNS:
            raise LaunchArgumentsError(f"a launch takes at most {LAUNCH_TYPE_RUNS} runs of argument types")
        segments = ir.DenseI32ArrayAttr.get(runs + [0] * (LAUNCH_TYPE_RUNS - len(runs)))
        ir.OpView.__init__(self, self.OPERATION_NAME, self._ODS_REGIONS, None, None,
                           attributes={"callee": callee, "operandSegmentSizes": segments},
                           results=list(result_types), operands=list(args), successors=None,
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
