"""A tiled module as what the eager record holds: a launch list, every kernel in both of its forms.

The host function of a module that went through the pipeline up to `ascend-plan-memory` is a
sequence of `ascend.launch`es and reshapes. Here it becomes a `LaunchList`: per launch, the sim
target's build of that tiled kernel (its .so, symbol and the tiling record's block_dim) and the
buffers it reads and writes; per kernel, its tiled MLIR and AscendC source; for the module, the
ACL host code (each kernel's launcher, and the module's runner when every kernel has one). The dispatcher (csrc/eager/KernelCache) runs the list with no Python.

Buffers are `Ref`s: ("in", k) the call's k-th tensor input, ("param", j) its j-th scalar parameter
(a 0-d f64/i64 argument, passed by value), ("out", j) its j-th result, ("tmp", t) an intermediate
of `temp_bytes[t]` bytes the dispatcher allocates per call. A launch's refs follow the sim ABI
(sim/abi.py): tensor arguments, then results, then scalar parameters, each in argument order.
Reshapes are free: a reshaped buffer is the same bytes, so it keeps its ref. Every result is
written by a launch: ascend-fuse gives a result torch-mlir folded to a constant a fill kernel (a
returned `full` / `zeros`) or a copy kernel (any other constant), else its buffer would keep
whatever the allocator last held there.

`LaunchListError` says why a module cannot become a list yet (the caller keeps the linalg path).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from torch_mlir import ir

from npu_mlir.analysis.host_function import VIEW_OPS, describe, host_compute, host_functions
from npu_mlir.analysis.kernel_model import is_scalar_param
from npu_mlir.errors import NOT_SUPPORTED, CompilerError
from npu_mlir.targets.ascendc import acl
from npu_mlir.targets.ascendc import emit as ascendc
from npu_mlir.targets.sim.abi import SCALAR_TYPES
from npu_mlir.targets.sim.kernel import compile_ascend_kernel, kernel_ops

Ref = tuple[str, int]


class LaunchListError(CompilerError, ValueError):
    """The module's host function holds something a launch list cannot express."""

    code = NOT_SUPPORTED


@dataclass(frozen=True)
class Launch:
    kernel: str  # the ascend.kernel's symbol in the module
    so_path: str
    symbol: str
    block_dim: int
    refs: tuple[Ref, ...]
    tiled_mlir: str
    ascendc: str | None  # None when the emitter cannot express the kernel yet (ascendc_error says why)
    acl: str | None  # the kernel's ACL launcher, when it has AscendC
    ascendc_error: str = ""
    compile_ms: float = 0.0


@dataclass(frozen=True)
class LaunchList:
    launches: tuple[Launch, ...]
    temp_bytes: tuple[int, ...]
    outputs: tuple[tuple[list[int], str], ...]  # (sizes, mlir element type) of each result
    acl: str | None
    acl_error: str = ""


def _view_strides(op: ir.Operation, strides: tuple[int, ...]) -> tuple[int, ...] | None:
    """Element strides of a reshape of a strided tensor, None when its bytes are not the reshape
    (merged dims that are not contiguous with each other). Unit dims take any stride."""
    groups = [[ir.IntegerAttr(d).value for d in g] for g in ir.ArrayAttr(op.attributes["reassociation"])]
    src = list(ir.RankedTensorType(op.operands[0].type).shape)
    dst = list(ir.RankedTensorType(op.results[0].type).shape)
    out: list[int] = []
    if op.name == "tensor.expand_shape":  # source dim k splits into the dims of group k
        for k, group in enumerate(groups):
            inner = [strides[k]]
            for d in reversed(group[1:]):
                inner.insert(0, inner[0] * dst[d])
            out += inner
        return tuple(out)
    if op.name == "tensor.collapse_shape":  # the dims of group k merge into result dim k
        for group in groups:
            real = [d for d in group if src[d] != 1]
            if any(strides[a] != strides[b] * src[b] for a, b in zip(real, real[1:])):
                return None
            out.append(strides[real[-1]] if real else 1)
        return tuple(out)
    return None


def _shape(v: ir.Value) -> list[int]:
    return list(ir.RankedTensorType(v.type).shape)


def _check_in_place(launches: list[Launch], n_results: int) -> None:
    reads = [i for i, k in enumerate(launches) if any(kind == "in" for kind, _ in k.refs)]
    if reads and any(("out", j) in k.refs for k in launches[:reads[-1]] for j in range(n_results)):
        raise LaunchListError("a result is written before a later kernel reads the inputs, which an in-place "
                              "call aliases")


def _uninitialized(value: ir.Value) -> bool:
    """A result with nothing to write: an empty tensor (aten.empty: uninitialized, as in eager) or no elements."""
    owner = value.owner
    return 0 in _shape(value) or (isinstance(owner, ir.OpView) and owner.operation.name == "tensor.empty")


def build(module: ir.Module, n_tensors: int, input_strides: Sequence[tuple[int, ...] | None],
          cache_dir: Path | None = None, results_may_alias_inputs: bool = False) -> LaunchList:
    """The launch list of `module`'s host function, whose first `n_tensors` arguments are tensor
    inputs (with these element strides, None = contiguous) and the rest scalar parameters.
    `results_may_alias_inputs`: the call may run in place (a pointwise op)."""
    funcs = host_functions(module.operation)
    if len(funcs) != 1:
        raise LaunchListError(f"the module has {len(funcs)} host functions, a launch list runs one")
    func = funcs[0]
    computing = host_compute(func)
    if computing:
        raise LaunchListError(f"computation left outside kernels: {describe(computing)}")
    block = func.regions[0].blocks[0]
    refs: dict[ir.Value, Ref] = {}
    strided: dict[ir.Value, tuple[int, ...]] = {}  # a strided input or a view of one -> its element strides
    for i, arg in enumerate(block.arguments):
        if i < n_tensors:
            refs[arg] = ("in", i)
            if input_strides[i] is not None:
                strided[arg] = tuple(input_strides[i])
        elif is_scalar_param(arg) and str(ir.RankedTensorType(arg.type).element_type) in SCALAR_TYPES:
            refs[arg] = ("param", i - n_tensors)
        else:
            raise LaunchListError(f"argument {i} is neither a tensor input nor an f64/i64 scalar parameter")

    ops = [op.operation for op in block.operations]
    returned = list(ops[-1].operands)
    root: dict[ir.Value, ir.Value] = {}  # reshaped value -> the buffer it views
    for op in ops:
        if op.name in VIEW_OPS:
            src = op.operands[0]
            if src in strided:  # a view of a strided input is strided too, when its bytes allow
                view = _view_strides(op, strided[src])
                if view is None:
                    raise LaunchListError("a reshape of a strided input is not a view of its bytes")
                strided[op.results[0]] = view
            root[op.results[0]] = root.get(src, src)
    out_of = {}  # buffer -> result index
    for j, v in enumerate(returned):
        buffer = root.get(v, v)
        if buffer in refs or buffer in out_of:
            raise LaunchListError("a result aliases an input or another result")
        out_of[buffer] = j

    kernels = kernel_ops(module)
    temps: list[int] = []
    launches: list[Launch] = []
    for op in ops:
        if op.name != "ascend.launch":
            continue
        name = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        kernel = kernels[name]
        for r in op.results:
            if r in out_of:
                refs[r] = ("out", out_of[r])
            else:
                refs[r] = ("tmp", len(temps))
                temps.append(acl.tensor_bytes(r.type))
        strides = [strided.get(v) for v in op.operands]
        operands = [root.get(v, v) for v in op.operands]
        scalars = [k for k, v in enumerate(operands) if refs[v][0] == "param"]
        built = compile_ascend_kernel(kernel, scalar_args=scalars, input_strides=strides, cache_dir=cache_dir)
        tensor_refs = [refs[v] for k, v in enumerate(operands) if k not in scalars]
        try:
            source, launcher, error = ascendc.HEADER + ascendc.emit_kernel(kernel), acl.HEADER + acl.emit_launcher(kernel), ""
        except Exception as err:  # an emitter gap or bug costs the kernel its AscendC, not its launch
            source, launcher, error = None, None, str(err) if isinstance(err, ascendc.CodegenError) else \
                f"ERR03005 GRAPH AscendC emitter failed: {type(err).__name__}: {err}"
        # Printed as verified (the pipeline verified it): str() verifies the whole module first, each
        # launch looking its kernel up, so a request's prints cost launches^2 lookups.
        launches.append(Launch(name, built.so_path, built.symbol, built.block_dim,
                               tuple(tensor_refs + [refs[r] for r in op.results] + [refs[operands[k]] for k in scalars]),
                               kernel.get_asm(assume_verified=True), source, launcher, error, built.compile_ms))
    for v, j in out_of.items():
        if v not in refs and not _uninitialized(v):  # no launch wrote it
            raise LaunchListError(f"result {j} is computed outside every kernel ({describe([v.owner.operation])})")
    if not launches:
        raise LaunchListError("the module launches no kernel")
    # A pointwise call in place gives its result the memory of its input (the dispatcher writes
    # straight into self): no launch may then read an input after an earlier one wrote a result.
    if results_may_alias_inputs:
        _check_in_place(launches, len(returned))
    try:
        host, host_error = acl.emit_module(module.operation), ""
    except Exception as err:  # as for a kernel: an emitter gap or bug costs the host code, not the record
        host, host_error = None, str(err) if isinstance(err, ascendc.CodegenError) else \
            f"ERR03005 GRAPH ACL emitter failed: {type(err).__name__}: {err}"
    outputs = tuple((_shape(v), str(ir.RankedTensorType(v.type).element_type)) for v in returned)
    return LaunchList(tuple(launches), tuple(temps), outputs, host, host_error)
