"""One compiled piece of an AOT graph: npu_mlir's launch list of it, run by C++ (torch_npu._C._CompiledGraph).

The piece's compute nodes are copied into a graph of their own whose inputs are the placeholders
they read and whose results are the *bases* of what the piece returns: an output that is a view
of an input, or of a computed value, is made here after the run by the same view ops on the real
tensors (the launch list cannot return an input's bytes, and the strides then match eager's), so
the kernels never copy an input and parameters are read in place. The description of that graph
(npu_mlir.frontend.fx_graph) is its key in the kernel cache: a hit loads the launch list without
starting a compile worker.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any, Callable, Sequence

import torch

from npu_mlir.frontend.fx_graph import GraphDescriptionError, describe
from torch_npu import _C
from torch_npu.dynamo import stats
from torch_npu.eager import disk_cache
from torch_npu.eager.workers import pool

aten = torch.ops.aten
# Ops whose result is a view of their first argument (the only tensor argument they take).
VIEW_OPS = {aten.view.default, aten._unsafe_view.default, aten.permute.default, aten.t.default,
            aten.transpose.int, aten.expand.default, aten.unsqueeze.default, aten.squeeze.dim,
            aten.squeeze.dims, aten.squeeze.default, aten.alias.default, aten.slice.Tensor, aten.select.int,
            aten.as_strided.default, aten.diagonal.default, aten.reshape.default}
BLOCK_DIM_KEY = "block_dim"


def _is_view(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and node.target in VIEW_OPS and \
        not any(isinstance(a, torch.fx.Node) for a in list(node.args[1:]) + list(node.kwargs.values()))


def _base(node: torch.fx.Node) -> tuple[torch.fx.Node, list[torch.fx.Node]]:
    """The node `node` is a chain of views of, and the chain (first view first)."""
    chain = []
    while _is_view(node):
        chain.append(node)
        node = node.args[0]
    return node, chain[::-1]


def tensor_meta(value: Any) -> tuple[str, list[int], list[int]]:
    return str(value.dtype).removeprefix("torch."), list(value.shape), list(value.stride())


class GraphExecutable:
    """Call with the piece's inputs (a list, as AOTAutograd's boxed calls pass them); returns its outputs."""

    def __init__(self, gm: torch.fx.GraphModule, inputs: Sequence[Any]) -> None:
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        returned = gm.graph.output_node().args[0]
        self.single = not isinstance(returned, (tuple, list))
        returned = [returned] if self.single else list(returned)
        index = {p: k for k, p in enumerate(placeholders)}
        bases: list[torch.fx.Node] = []
        # Per output: ("none",) | ("input", k, chain) | ("result", j, chain)
        self.outputs: list[tuple] = []
        for value in returned:
            if value is None:
                self.outputs.append(("none",))
                continue
            base, chain = _base(value)
            views = [(n.target, n.args[1:], dict(n.kwargs)) for n in chain]
            if base.op == "placeholder":
                self.outputs.append(("input", index[base], views))
            else:
                if base not in bases:
                    bases.append(base)
                self.outputs.append(("result", bases.index(base), views))
        compute = torch.fx.Graph()
        env: dict[torch.fx.Node, torch.fx.Node] = {}
        needed = set()
        for base in bases:
            stack = [base]
            while stack:
                n = stack.pop()
                if n not in needed:
                    needed.add(n)
                    stack.extend(n.all_input_nodes)
        self.inputs = [index[p] for p in placeholders if p in needed]
        for p in placeholders:
            if p in needed:
                env[p] = compute.placeholder(p.name)
        for n in gm.graph.nodes:
            if n.op == "call_function" and n in needed:
                env[n] = compute.node_copy(n, lambda x: env[x])
        compute.output(tuple(env[b] for b in bases))
        self.metas = [tensor_meta(inputs[k]) for k in self.inputs]
        self.compiled = None
        self.launches = 0
        if bases:
            self._compile(torch.fx.GraphModule(torch.nn.Module(), compute), [b.name for b in bases])

    def _compile(self, gm: torch.fx.GraphModule, outputs: list[str]) -> None:
        description = describe(gm, self.metas, outputs)
        key = b"graph|" + repr(description).encode()
        digest = hashlib.sha256(key).hexdigest()[:16]
        record = disk_cache.load(key)
        if record is None:
            stats.count("cache_misses")
            request = {"kind": "graph", "graph": description, "name": f"graph_{digest}",
                       "cache_dir": str(disk_cache.version_dir())}
            start = time.perf_counter()
            record = pool().compile(request)
            stats.count("compile_ms", (time.perf_counter() - start) * 1e3)
            disk_cache.store(key, record)
        else:
            stats.count("cache_hits")
        self.compiled = _C._CompiledGraph(record, [-1] * len(record["outputs"]), len(self.inputs))
        self.launches = self.compiled.launch_count
        stats.count("graphs_compiled")
        stats.count("kernels", self.launches)

    def __call__(self, args: list) -> list:
        inputs = [args[k] for k in self.inputs]
        for k, (t, (_, shape, strides)) in enumerate(zip(inputs, self.metas)):
            # The kernels were built for these strides; AOTAutograd hands in what it traced with, mostly.
            if list(t.stride()) != strides:
                inputs[k] = torch.empty_strided(shape, strides, dtype=t.dtype, device=t.device).copy_(t)
        results = self.compiled.run(inputs, []) if self.compiled is not None else []
        outs = []
        for spec in self.outputs:
            if spec[0] == "none":
                outs.append(None)
                continue
            value = args[spec[1]] if spec[0] == "input" else results[spec[1]]
            for target, rest, kwargs in spec[2]:
                value = target(value, *rest, **kwargs)
            outs.append(value)
        return outs[0] if self.single else outs


def compile_piece(gm: torch.fx.GraphModule, inputs: Sequence[Any]) -> Callable:
    """The executable of `gm` (raises CompileRejected / WorkerCrashed / GraphDescriptionError)."""
    return GraphExecutable(gm, inputs)


__all__ = ["GraphDescriptionError", "GraphExecutable", "compile_piece", "tensor_meta"]
