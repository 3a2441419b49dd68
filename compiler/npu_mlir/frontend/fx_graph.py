"""Whole FX graphs (torch.compile's AOT graphs) -> one launch list, through the same pipeline as eager ops.

The user's process describes a graph with `describe` (plain data: it crosses the compile-worker pipe
and its repr is the graph's cache key); a compile worker rebuilds it on CPU example tensors with
`rebuild`, imports it whole with torch-mlir's FX importer and runs `npu_mlir.pipeline` on it, so
fusion and tiling see the whole forward or backward graph, not one op at a time. The record `build`
returns is the eager record's shape (targets/launch_list.py): launches over ("in", k) graph inputs,
("out", j) graph results and ("tmp", t) intermediates, plus every kernel's tiled MLIR and AscendC.

A description holds:
    inputs   [(dtype, shape, strides)] per placeholder; input_names their node names
    nodes    [(name, target, args, kwargs)] per call_function node in graph order; target is the
             op's qualified name ("aten.mm.default") or "getitem"; args encode nodes as ("node", name)
    outputs  [name] of the values the graph returns (the caller keeps views and inputs out of it)
    params   how many of the last inputs are 0-d int64 scalar parameters (a random graph's Philox
             seed and offset): launch arguments passed by value, not tensors
Only torch is imported at module level: the user's process imports this file without torch-mlir.
"""

from __future__ import annotations

import operator
import os
import time
from pathlib import Path
from typing import Any

import torch

DUMP_ENV = "TORCH_NPU_COMPILE_DUMP"
_SIMPLE = (int, float, bool, str, type(None))


class GraphDescriptionError(ValueError):
    """The graph holds a value the description cannot carry (the caller splits the node out)."""


def _encode(value: Any) -> Any:
    if isinstance(value, torch.fx.Node):
        return ("node", value.name)
    if isinstance(value, (list, tuple)):
        return ("seq", [_encode(v) for v in value])
    if isinstance(value, torch.dtype):
        return ("dtype", str(value).removeprefix("torch."))
    if isinstance(value, torch.device):
        return ("device",)  # the worker traces on CPU example tensors
    if isinstance(value, torch.memory_format):
        return ("memory_format", str(value).removeprefix("torch."))
    if isinstance(value, torch.layout):
        return ("layout", str(value).removeprefix("torch."))
    if isinstance(value, _SIMPLE):
        return ("value", value)
    raise GraphDescriptionError(f"an argument of type {type(value).__name__} ({value!r:.80})")


def target_name(target: Any) -> str:
    """The qualified name of a call_function target ("aten.mm.default"), "getitem", or raises."""
    if target is operator.getitem:
        return "getitem"
    if isinstance(target, torch._ops.OpOverload):
        return f"{target.namespace}.{target._schema.name.split('::')[1]}.{target._overloadname}"
    raise GraphDescriptionError(f"the call target {target!r:.80} is not an aten/prims operator")


def describe_node(node: torch.fx.Node) -> tuple:
    """One call_function node as plain data (raises GraphDescriptionError)."""
    return (node.name, target_name(node.target), [_encode(a) for a in node.args],
            {k: _encode(v) for k, v in node.kwargs.items()})


def describe(gm: torch.fx.GraphModule, inputs: list[tuple[str, list[int], list[int]]],
             outputs: list[str], params: int = 0) -> dict:
    """The graph `gm` (placeholders, call_function nodes, one output) with its inputs' (dtype, shape,
    strides), the names of the nodes it returns and how many of its last inputs are scalar parameters."""
    nodes = [describe_node(n) for n in gm.graph.nodes if n.op == "call_function"]
    other = [n.op for n in gm.graph.nodes if n.op not in ("placeholder", "call_function", "output")]
    if other:
        raise GraphDescriptionError(f"nodes of kind {sorted(set(other))}")
    names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
    description = {"inputs": inputs, "input_names": names, "nodes": nodes, "outputs": outputs}
    if params:
        description["params"] = params
    return description


def _resolve(name: str) -> Any:
    """The callable a node of target `name` traces through: the eager path's retrace where it has one
    (decompositions/retrace.py: scatter-free nll_loss, batch norm, pooling, convolution backwards)."""
    from npu_mlir.frontend.decompositions.retrace import RETRACED
    from npu_mlir.frontend.decompositions.scaled_pointwise import RETRACED as PARAMETER_RETRACES

    if name == "getitem":
        return operator.getitem
    namespace, op, overload = name.split(".")
    target = getattr(getattr(getattr(torch.ops, namespace), op), overload)
    # The scaled-pointwise retraces take their value as an eager kernel parameter; a graph keeps constants.
    return target if target in PARAMETER_RETRACES else RETRACED.get(target, target)


def _decode(value: Any, env: dict[str, torch.fx.Node]) -> Any:
    tag = value[0]
    if tag == "node":
        return env[value[1]]
    if tag == "seq":
        return [_decode(v, env) for v in value[1]]
    if tag == "dtype":
        return getattr(torch, value[1])
    if tag == "device":
        return torch.device("cpu")
    if tag in ("memory_format", "layout"):
        return getattr(torch, value[1])
    return value[1]


def rebuild(description: dict) -> torch.fx.GraphModule:
    """The described graph as a GraphModule over its inputs, returning its outputs."""
    graph = torch.fx.Graph()
    env: dict[str, torch.fx.Node] = {}
    for name in description["input_names"]:
        env[name] = graph.placeholder(name)
    for name, target, args, kwargs in description["nodes"]:
        env[name] = graph.call_function(_resolve(target), tuple(_decode(a, env) for a in args),
                                        {k: _decode(v, env) for k, v in kwargs.items()})
    graph.output(tuple(env[name] for name in description["outputs"]))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def _dump(directory: Path, name: str, description: dict, linalg: str, record: dict) -> None:
    """$TORCH_NPU_COMPILE_DUMP: the graph, its linalg module, the pipeline's IR per stage, each kernel's
    tiled MLIR and AscendC."""
    directory.mkdir(parents=True, exist_ok=True)
    stem = directory / name
    stem.with_suffix(".fx.py").write_text(rebuild(description).code)
    # one newline at the end, as npu-opt prints a module: a stage's file is byte for byte what npu-opt
    # on the one before it prints (after the "// after:" line naming the passes)
    stem.with_suffix(".0-linalg.mlir").write_text(linalg.rstrip("\n") + "\n")
    for i, (stage, text) in enumerate(record.get("stages", []), start=1):
        stem.with_suffix(f".{i}-{stage}.mlir").write_text(text.rstrip("\n") + "\n")
    for source in record.get("sources", []):
        kernel = f"{name}.{source['kernel']}"
        (directory / f"{kernel}.tiled.mlir").write_text(source["tiled_mlir"] + "\n")
        (directory / f"{kernel}.ascendc.cpp").write_text(
            source["ascendc"] or f"// no AscendC yet: {source['ascendc_error']}\n")


def _stage_texts(linalg: str) -> list[tuple[str, str]]:
    """The module after each named stage of the pipeline, each stage run on the previous one's output,
    so `npu-opt --pass-pipeline=<the stage's passes>` on one dumped file reproduces the next."""
    from torch_mlir import ir

    from npu_mlir.dialects.ascend import load_ascend
    from npu_mlir.pipeline import STAGES, UNTIL, PipelineOptions
    from npu_mlir.tools.pass_pipeline import build_pass_manager

    options = PipelineOptions(from_torch=False)
    texts = []
    context = ir.Context()
    load_ascend(context)
    with context, ir.Location.unknown():
        module = ir.Module.parse(linalg)
        for stage in UNTIL[: UNTIL.index("tile") + 1]:
            elements = [e for fn in STAGES[stage] for e in fn(options)]
            if elements:
                build_pass_manager(elements).run(module.operation)
            texts.append((stage, f"// after: builtin.module({', '.join(elements)})\n{module}"))
    return texts


def build(request: dict) -> dict:
    """Rebuild, import and compile the described graph (runs in a compile worker): its launch list."""
    from npu_mlir.frontend.kernel_build import _pipeline_record
    from npu_mlir.frontend.references.formats import contiguous_strides
    from npu_mlir.frontend.torch_import import import_fx_graph

    start = time.perf_counter()
    description = request["graph"]
    examples = [torch.ones(shape, dtype=getattr(torch, dtype)).as_strided(shape, strides)
                if list(strides) == list(contiguous_strides(tuple(shape))) else
                torch.empty_strided(shape, strides, dtype=getattr(torch, dtype)).fill_(1)
                for dtype, shape, strides in description["inputs"]]
    gm = rebuild(description)
    imported = import_fx_graph(gm, examples)
    linalg = str(imported.module)
    strides = [None if list(s) == list(contiguous_strides(tuple(shape))) else tuple(s)
               for _, shape, s in description["inputs"]]
    n_tensors = len(examples) - description.get("params", 0)
    record = _pipeline_record(linalg, n_tensors, strides, Path(request["cache_dir"]), False)
    record["compile_ms"] = (time.perf_counter() - start) * 1e3
    if os.environ.get(DUMP_ENV):
        record["stages"] = _stage_texts(linalg)
        _dump(Path(os.environ[DUMP_ENV]), request["name"], description, linalg, record)
        del record["stages"]
    return record
