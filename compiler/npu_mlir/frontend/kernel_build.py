"""Build one planned eager call into a kernel: runs inside a compile worker (no torch_npu import).

A request (made by torch_npu.eager.plan) names the functional aten op to trace and a template of
its arguments whose leaves are tagged tuples:
    ("tensor", k)        k-th tensor input (described in request["tensors"] as dtype, shape, strides)
    ("param", j)         j-th scalar parameter: a 0-d float64/int64 tensor, a kernel argument
    ("param_f32", j)     the same, narrowed to float32 first (for float16/bfloat16 ops)
    ("scaled", leaf, p)  leaf * parameter leaf p (how `alpha` becomes a parameter)
    ("list", [leaves])   a tensor list
    ("formatted", leaf, fmt, shape)  the logical tensor of `shape` whose internal-format storage is leaf
    ("value", v)         a constant
The same `materialize` runs on meta tensors in the user's process (to check that parameters keep
the op's result dtypes) and on example tensors here (to trace it).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Sequence

import torch

from npu_mlir.hardware.dtypes import BY_MLIR, SCALAR_PARAM_TYPES, torch_dtype
from npu_mlir.frontend.decompositions.integer import wrapped
from npu_mlir.frontend.decompositions.output_layout import in_memory_order
from npu_mlir.frontend.decompositions.retrace import RETRACED
from npu_mlir.frontend.references import reference as custom_reference
from npu_mlir.frontend.references.formats import contiguous_strides, to_logical

# "0": build every call straight from linalg, bypassing the ascend pipeline: only the peer that
# bench_pipeline measures the pipeline against (torch_npu's disk cache keeps records built either way
# apart). A call the pipeline refuses is never built that way: it runs on the CPU fallback, with the reason.
PIPELINE_ENV = "TORCH_NPU_EAGER_PIPELINE"
PARAM_DTYPES = {name: torch_dtype(BY_MLIR[name]) for name in SCALAR_PARAM_TYPES}


def resolve_op(qualified: str) -> torch._ops.OpOverload:
    """'aten::add.Tensor' -> torch.ops.aten.add.Tensor."""
    namespace, name = qualified.split("::")
    base, _, overload = name.partition(".")
    return getattr(getattr(getattr(torch.ops, namespace), base), overload or "default")


def _leaf(template: Any, tensors: Sequence[torch.Tensor], params: Sequence[torch.Tensor]) -> Any:
    tag = template[0]
    if tag == "tensor":
        return tensors[template[1]]
    if tag == "param":
        return params[template[1]]
    if tag == "param_f32":
        # float64 -> half does not lower in the sim target; torch computes half ops in float32 anyway.
        return params[template[1]].to(torch.float32)
    if tag == "scaled":
        operand, scale = _leaf(template[1], tensors, params), _leaf(template[2], tensors, params)
        if not operand.dtype.is_floating_point and not operand.dtype.is_complex and operand.dtype != torch.bool:
            # torch multiplies in the operand's integer dtype (a 0-d scale does not promote); stated
            # as a cast, since torch-mlir crashed on an int8 tensor times a 0-d int64 (int8 add fell back).
            scale = scale.to(operand.dtype)
        return torch.ops.aten.mul.Tensor(operand, scale)
    if tag == "formatted":
        return to_logical(_leaf(template[1], tensors, params), template[2], template[3])
    if tag == "list":
        return [_leaf(t, tensors, params) if t is not None else None for t in template[1]]
    return template[1]


def _narrow_integer_dtype(op: torch._ops.OpOverload, operands: Sequence[torch.Tensor]) -> torch.dtype | None:
    """int8, when a pointwise op computes in it.

    torch casts a scalar operand to the operands' common dtype (int8 % 300 is int8 % 44), and
    torch-mlir crashed on an int8 tensor combined with a 0-d int64 (int8 mul / remainder / fmod
    fell back): an integer parameter is cast to int8 first, which is the same computation. Only
    int8: int16 / int32 import fine, and the sim's schedule refuses a kernel that casts its
    parameter (clamp's bound).
    """
    if torch.Tag.pointwise not in op.tags or not operands:
        return None
    common = operands[0].dtype
    for t in operands[1:]:
        common = torch.promote_types(common, t.dtype)
    return common if common == torch.int8 else None


def materialize(request: dict, tensors: Sequence[torch.Tensor], params: Sequence[torch.Tensor],
                retraced: bool = True) -> Any:
    """Call the request's op on these tensors and parameters (through its retrace unless `retraced` is
    False: the op itself gives the layout PyTorch gives its results)."""
    reference = custom_reference(request["target"])
    if reference is not None:
        # torch_npu's own ops are not registered in a compile worker: their reference is the op.
        return reference(*(_leaf(template, tensors, params) for template in request["args"]))
    op = resolve_op(request["target"])
    narrow = _narrow_integer_dtype(op, [tensors[t[1]] for t in request["args"] if t[0] == "tensor"])
    args, kwargs = [], {}
    for schema_arg, template in zip(op._schema.arguments, request["args"]):
        value = _leaf(template, tensors, params)
        if narrow is not None and template[0] == "param" and not value.dtype.is_floating_point:
            value = value.to(narrow)
        if schema_arg.kwarg_only:
            kwargs[schema_arg.name] = value
        else:
            args.append(value)
    if narrow is not None:
        op, args = _narrow_integer_scalars(op, args, narrow)
    return (RETRACED.get(op, op) if retraced else op)(*args, **kwargs)


def _narrow_integer_scalars(op: torch._ops.OpOverload, args: list, narrow: torch.dtype) -> tuple[torch._ops.OpOverload, list]:
    """A `.Scalar` overload's integer operand as a 0-d tensor of `narrow`, through the `.Tensor` overload.

    torch-mlir crashed on an int8 tensor combined with a Python int as well (int8 % 3 fell back)."""
    packet = getattr(torch.ops.aten, op._schema.name.split("::")[1])
    if op._overloadname != "Scalar" or "Tensor" not in packet.overloads() or op in RETRACED:
        return op, args
    tensors = [torch.full((), wrapped(value, narrow), dtype=narrow, device=args[0].device)
               if schema_arg.type.kind() == "NumberType" and type(value) is int else value
               for schema_arg, value in zip(op._schema.arguments, args)]
    return packet.Tensor, tensors


def example_tensors(request: dict, device: str = "cpu") -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    tensors = [torch.empty_strided(shape, strides, dtype=dtype, device=device) for dtype, shape, strides
               in request["tensors"]]
    if device == "cpu":
        for t in tensors:
            t.fill_(1)
    params = [torch.ones((), dtype=PARAM_DTYPES[p], device=device) for p in request["params"]]
    return tensors, params


DUMP_ENV = "TORCH_NPU_DUMP_KERNELS"


_context: list = []  # the worker's MLIR context for pipeline runs (a compile worker is single-threaded)


def _refs(kind: str, count: int) -> list[tuple[str, int]]:
    return [(kind, i) for i in range(count)]


def _pointwise(target: str) -> bool:
    """Whether the dispatcher may write this op's result into its input (csrc/eager canWriteInto)."""
    if custom_reference(target) is not None:
        return False
    return torch.Tag.pointwise in resolve_op(target).tags


def _pipeline_record(text: str, n_tensors: int, strides: list, cache_dir: Path, pointwise: bool) -> dict:
    """The call through npu_mlir's pipeline: one launch per tiled ascend.kernel (see launch_list)."""
    from torch_mlir import ir

    from npu_mlir.dialects.ascend import load_ascend
    from npu_mlir.pipeline import PipelineOptions, run_pipeline
    from npu_mlir.targets import launch_list

    if not _context:
        # One per worker: loading the Python-defined ascend dialect costs ~20 ms per context.
        context = ir.Context()
        context.enable_multithreading(False)  # one-op modules: MLIR's thread pool costs more than it saves
        load_ascend(context)
        _context.append(context)
    with _context[0], ir.Location.unknown():
        module = ir.Module.parse(text)
        run_pipeline(module, PipelineOptions(from_torch=False))
        built = launch_list.build(module, n_tensors, strides[:n_tensors], cache_dir, results_may_alias_inputs=pointwise)
    launches = [{"so_path": k.so_path, "symbol": k.symbol, "block_dim": k.block_dim, "refs": list(k.refs)}
                for k in built.launches]
    sources = [{"kernel": k.kernel, "symbol": k.symbol, "tiled_mlir": k.tiled_mlir, "ascendc": k.ascendc,
                "acl": k.acl, "ascendc_error": k.ascendc_error} for k in built.launches]
    return {"path": "pipeline", "launches": launches, "temps": list(built.temp_bytes),
            "outputs": [list(o) for o in built.outputs], "sources": sources, "acl": built.acl}


def _linalg_record(module, request: dict, n_tensors: int, n_params: int, strides: list, reason: str) -> dict:
    """The call built by the sim target straight from linalg: one launch, no tiling, no AscendC."""
    from npu_mlir.targets.sim.build import SimTiling, compile_linalg

    kernel = compile_linalg(module, SimTiling(request["block_dim"]), name=request["name"],
                            scalar_inputs=range(n_tensors, n_tensors + n_params), input_strides=strides,
                            cache_dir=Path(request["cache_dir"]))
    if len(kernel.inputs) != n_tensors or len(kernel.scalars) != n_params:
        raise ValueError(f"the kernel takes {len(kernel.inputs)} tensors and {len(kernel.scalars)} scalars, the "
                         f"call has {n_tensors} and {n_params}")
    refs = _refs("in", n_tensors) + _refs("out", len(kernel.outputs)) + _refs("param", n_params)
    return {"path": "linalg", "reason": reason, "temps": [],
            "launches": [{"so_path": kernel.so_path, "symbol": kernel.symbol, "block_dim": kernel.block_dim,
                          "refs": refs}],
            "outputs": [(list(s.shape), s.dtype) for s in kernel.outputs]}


def _dump(record: dict, linalg_text: str, directory: Path) -> None:
    """$TORCH_NPU_DUMP_KERNELS: per compiled kernel its tiled MLIR, AscendC and ACL source."""
    directory.mkdir(parents=True, exist_ok=True)
    for source in record.get("sources", []):
        stem = directory / source["symbol"]
        stem.with_suffix(".mlir").write_text(source["tiled_mlir"] + "\n")
        missing = f"// @{source['kernel']} has no AscendC yet: {source['ascendc_error']}\n"
        stem.with_suffix(".ascendc.cpp").write_text(source["ascendc"] or missing)
        stem.with_suffix(".acl.cpp").write_text(source["acl"] or missing)
    if record["path"] == "linalg":
        stem = directory / record["launches"][0]["symbol"]
        stem.with_suffix(".linalg.mlir").write_text(
            f"// not through the ascend pipeline (no tiling, no AscendC): {record['reason']}\n{linalg_text}\n")


def build(request: dict) -> dict:
    """Trace, lower and build the request: its launch list (see torch_npu.eager.miss)."""
    from npu_mlir.frontend.torch_import import import_fx_graph

    start = time.perf_counter()
    tensors, params = example_tensors(request)
    n_tensors, n_params = len(tensors), len(params)

    def call(*xs: torch.Tensor) -> Any:
        results = materialize(request, xs[:n_tensors], xs[n_tensors:])
        # Results the plan gives a memory order are written in it (decompositions/output_layout.py).
        return in_memory_order(results, request["layouts"]) if request.get("layouts") else results

    graph = import_fx_graph(call, tensors + params)
    text = str(graph.module)
    strides = [tuple(s) for _, _, s in request["tensors"]] + [None] * n_params
    contiguous = [None if s == contiguous_strides(tuple(shape)) else s for (_, shape, _), s in zip(request["tensors"], strides)]
    if os.environ.get(PIPELINE_ENV, "1") != "0":
        # A refusal raises: the compile worker answers with it and the call runs on the CPU fallback.
        record = _pipeline_record(text, n_tensors, contiguous, Path(request["cache_dir"]),
                                  _pointwise(request["target"]))
    else:
        record = _linalg_record(graph.module, request, n_tensors, n_params, strides, f"{PIPELINE_ENV}=0")
    if os.environ.get(DUMP_ENV):
        _dump(record, text, Path(os.environ[DUMP_ENV]))
    record["compile_ms"] = (time.perf_counter() - start) * 1e3
    return record
