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
import re
import time
from typing import Any, Callable, Sequence

import torch

from npu_mlir.frontend.fx_graph import GraphDescriptionError, describe
from npu_mlir.tools.compile_protocol import CompileRequest, KernelRecord, Rejected
from torch_npu import _C
from torch_npu.dynamo import rng, stats
from torch_npu.eager import disk_cache
from torch_npu.eager.workers import CompileRejected, pool

aten = torch.ops.aten
# Ops whose result is a view of their first argument (the only tensor argument they take).
VIEW_OPS = {aten.view.default, aten._unsafe_view.default, aten.permute.default, aten.t.default,
            aten.transpose.int, aten.expand.default, aten.unsqueeze.default, aten.squeeze.dim,
            aten.squeeze.dims, aten.squeeze.default, aten.alias.default, aten.slice.Tensor, aten.select.int,
            aten.as_strided.default, aten.diagonal.default, aten.reshape.default}
BLOCK_DIM_KEY = "block_dim"
# ascend-fuse names each kernel <function>_<group kind>_<n> (npu_mlir.passes.fuse_outline); a graph's
# function is torch-mlir's @main.
KERNEL_KIND = re.compile(r"^main_(\w+)_\d+$")


RESHAPED = {aten.view.default: aten.reshape.default, aten._unsafe_view.default: aten.reshape.default}


def _replay_views(value: torch.Tensor, chain: list, substitutes: dict | None = None) -> torch.Tensor:
    for target, rest, kwargs in chain:
        value = (substitutes or {}).get(target, target)(value, *rest, **kwargs)
    return value


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

    def __init__(self, gm: torch.fx.GraphModule, inputs: Sequence[Any], chunk: dict | None = None) -> None:
        # chunk (dynamic.py): the piece is compiled for `extent` of a dynamic size and runs chunk by
        # chunk; "size" says where a call reads its size, "dims" each node's (dim, scale) of it,
        # "params" the names of the scalar parameters C++ sets per chunk (ChunkPlan's size / first row).
        self.chunk = chunk
        # Random nodes draw from two scalar parameters the piece takes after its tensors (rng.py).
        gm, self.philox_increment = rng.functionalize(gm)
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        param_names = set(rng.PARAM_NAMES if self.philox_increment else ()) | set((chunk or {}).get("params", ()))
        params = [p for p in placeholders if p.name in param_names]
        placeholders = [p for p in placeholders if p.name not in param_names]
        self.param_names = [p.name for p in params]
        returned = gm.graph.output_node().args[0]
        self.single = not isinstance(returned, (tuple, list))
        returned = [returned] if self.single else list(returned)
        index = {p: k for k, p in enumerate(placeholders)}
        # copy_(input, value) nodes (AOTAutograd keeps input mutations in the graph): the value is a
        # result written straight into the input's buffer when no later kernel reads the input.
        copies = [n for n in gm.graph.nodes if n.op == "call_function" and n.target == aten.copy_.default]
        bases: list[torch.fx.Node] = []
        mutated: list[tuple[int, torch.fx.Node]] = []
        for node in copies:
            source, chain = _base(node.args[1])
            if node.args[0].op != "placeholder" or chain or source.op == "placeholder" or source in bases:
                raise GraphDescriptionError("an input mutation that is not a computed value written whole")
            bases.append(source)
            mutated.append((index[node.args[0]], source))
        # Per output: ("none",) | ("input", k, chain) | ("result", j, chain)
        self.outputs: list[tuple] = []
        self.output_names: list[tuple[str, str] | None] = []  # (output, its base) node names
        for value in returned:
            if value is None:
                self.outputs.append(("none",))
                self.output_names.append(None)
                continue
            base, chain = _base(value)
            if base.op == "call_function" and base.target == aten.copy_.default:
                base = base.args[0]  # copy_ returns the input it wrote
            self.output_names.append((value.name, base.name))
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
        needed.update(placeholders[k] for k, _ in mutated)
        self.inputs = [index[p] for p in placeholders if p in needed]
        self.input_names = [placeholders[k].name for k in self.inputs]
        self.base_names = [b.name for b in bases]
        for p in placeholders + params:
            if p in needed or p in params:
                env[p] = compute.placeholder(p.name)
        for n in gm.graph.nodes:
            if n.op == "call_function" and n in needed:
                env[n] = compute.node_copy(n, lambda x: env[x])
        compute.output(tuple(env[b] for b in bases))
        self.metas = [tensor_meta(inputs[k]) for k in self.inputs]
        npu = [inputs[k].device for k in self.inputs if inputs[k].device.type != "cpu"]
        self.device = npu[0] if npu else torch.device("npu", torch.npu.current_device())
        self.params = [("int64", [], [])] * len(params)
        self.compiled = None
        self.launches = 0
        self.copy_back: list[tuple[int, int]] = []  # (input, result) mutations that could not alias
        if bases:
            mutations = {bases.index(source): self.inputs.index(k) for k, source in mutated}
            self._compile(torch.fx.GraphModule(torch.nn.Module(), compute), [b.name for b in bases], mutations, inputs)

    def _aliases(self, record: KernelRecord, mutations: dict[int, int]) -> list[int]:
        """Per result, the input whose buffer it is written into (-1: a fresh buffer). A result aliases
        its input unless a launch after the one writing it still reads that input."""
        aliases = [-1] * len(record.outputs)
        for j, k in mutations.items():
            writers = [i for i, launch in enumerate(record.launches) if ("out", j) in launch.refs]
            readers = [i for i, launch in enumerate(record.launches) if ("in", k) in launch.refs]
            if writers and all(i <= writers[0] for i in readers):
                aliases[j] = k
                stats.count("mutations_aliased")
            else:
                self.copy_back.append((self.inputs[k], j))
                stats.count("mutations_copied")
        return aliases

    def _compile(self, gm: torch.fx.GraphModule, outputs: list[str], mutations: dict[int, int],
                 inputs: Sequence[Any]) -> None:
        description = describe(gm, self.metas + self.params, outputs, params=len(self.params))
        key = b"graph|" + repr(description).encode()
        digest = hashlib.sha256(key).hexdigest()[:16]
        record = disk_cache.load(key)
        if record is None:
            stats.count("cache_misses")
            request = CompileRequest("graph", {"graph": description, "name": f"graph_{digest}"},
                                     str(disk_cache.version_dir()))
            start = time.perf_counter()
            try:
                record = pool().compile(request)
            except CompileRejected as err:
                # A refusal is kept too: a warm start splits where the cold one did without asking again.
                disk_cache.store(key, Rejected(str(err)))
                raise
            finally:
                stats.count("compile_ms", (time.perf_counter() - start) * 1e3)
            disk_cache.store(key, record)
        else:
            stats.count("cache_hits")
            if isinstance(record, Rejected):
                raise CompileRejected(record.reason)
        aliases = self._aliases(record, mutations)
        self.compiled = _C._CompiledGraph(record, aliases, len(self.inputs), self.philox_increment,
                                          self._call_plan(record, inputs), self._replay)
        self.launches = self.compiled.launch_count
        stats.count("arena_bytes", self.compiled.arena_bytes)
        stats.count("temp_bytes", sum(record.temps))
        stats.count("graphs_compiled")
        stats.count("kernels", self.launches)
        for source in record.sources:
            kind = KERNEL_KIND.search(source.kernel)
            stats.count_kernel(kind.group(1) if kind else "other")

    def _call_plan(self, record: KernelRecord, inputs: Sequence[Any]) -> dict:
        """What the C++ call does around the plan (CallPlan in csrc/graph/CompiledGraph.h): each output's
        view chain replayed once here on meta tensors of the traced layouts, so a call makes it with one
        as_strided."""
        outputs = []
        for spec in self.outputs:
            if spec[0] == "none":
                outputs.append({"base": "none"})
                continue
            if spec[0] == "input":
                sizes, strides = list(inputs[spec[1]].shape), list(inputs[spec[1]].stride())
            else:
                sizes = list(record.outputs[spec[1]][0])
                strides = list(torch.empty(sizes, device="meta").stride())
            out = {"base": spec[0], "index": spec[1], "view": bool(spec[2])}
            if spec[2]:
                base = torch.empty_strided(sizes, strides, device="meta")
                try:
                    view = _replay_views(base, spec[2])
                    layout_known = view._base is base
                except RuntimeError:
                    layout_known = False
                if not layout_known:  # the chain copies (a reshape that cannot view): replayed each call
                    out.update(sizes=[], strides=[], offset=0, absolute=False, base_sizes=[-1], base_strides=[])
                else:
                    out.update(sizes=list(view.shape), strides=list(view.stride()), offset=view.storage_offset(),
                               absolute=any(target == aten.as_strided.default for target, _, _ in spec[2]),
                               base_sizes=sizes, base_strides=strides)
            outputs.append(out)
        plan = {"inputs": self.inputs, "strides": [m[2] for m in self.metas], "copy_back": self.copy_back,
                "device": self.device.index or 0, "outputs": outputs}
        if self.chunk is not None:
            plan["chunk"] = self._chunk_plan(record, inputs, outputs)
        return plan

    def _chunk_plan(self, record: KernelRecord, inputs: Sequence[Any], outputs: list[dict]) -> dict:
        """ChunkPlan (csrc/graph/CompiledGraph.h): per input the bytes one unit of the dynamic size
        advances, per result and output view the dim that holds it."""
        def held(name: str) -> tuple[int, int] | None:
            dyn = self.chunk["dims"].get(name)
            if dyn is not None and len(dyn) != 2:
                raise GraphDescriptionError(f"{name} holds the dynamic size merged into a dim with others")
            return dyn

        steps = []
        for name, k in zip(self.input_names, self.inputs):
            dyn = held(name)
            steps.append(0 if dyn is None else dyn[1] * inputs[k].stride(dyn[0]) * inputs[k].element_size())
        result_dims = [held(name) for name in self.base_names]
        for (sizes, _), dyn in zip(record.outputs, result_dims):
            if dyn is not None and any(s != 1 for s in sizes[:dyn[0]]):
                raise GraphDescriptionError("a result holds the dynamic size behind a dim of more than one element")
        for out, names in zip(outputs, self.output_names):
            if out.get("view") and out.get("base_sizes") != [-1]:
                view, base = held(names[0]), held(names[1])
                out["dynamic"] = [*(view or (-1, 0)), *(base or (-1, 0))]
            elif out.get("view") and held(names[0]) is not None:
                raise GraphDescriptionError("an output view of the dynamic size that copies")
        if self.chunk.get("params") and self.copy_back:
            # an accumulator copied back after the run would not carry one chunk's sum into the next
            raise GraphDescriptionError("a sum over the dynamic size could not be written into its accumulator")
        names = self.chunk.get("params", ())
        size_param, first_row_param = (self.param_names.index(n) if n in self.param_names else -1 for n in names) \
            if names else (-1, -1)
        return {"extent": self.chunk["extent"], "size": list(self.chunk["size"]), "input_step": steps,
                "output_dim": [-1 if d is None else d[0] for d in result_dims],
                "output_scale": [0 if d is None else d[1] for d in result_dims],
                "size_param": size_param, "first_row_param": first_row_param}

    def _replay(self, index: int, base: torch.Tensor) -> torch.Tensor:
        """Output `index` made from `base` by its view chain."""
        chain = self.outputs[index][2]
        try:
            return _replay_views(base, chain)
        except RuntimeError:
            # An input with other strides than traced (an eager piece's result): a view of it may
            # need a copy, as reshape makes.
            return _replay_views(base, chain, RESHAPED)

    def __call__(self, args: list) -> list:
        if self.compiled is not None:
            outs = self.compiled(args)
        else:  # nothing to compute: every output is an input, a view of one, or None
            outs = [None if spec[0] == "none" else self._replay(i, args[spec[1]]) for i, spec in enumerate(self.outputs)]
        return outs[0] if self.single else outs

    def boxed(self) -> Callable[[list], Any]:
        """The callable AOTAutograd calls with its list of arguments: the C++ graph itself where the
        piece returns a list (no Python frame per call)."""
        run = self.compiled if self.compiled is not None and not self.single else self
        run._boxed_call = True
        return run


def compile_piece(gm: torch.fx.GraphModule, inputs: Sequence[Any]) -> Callable:
    """The executable of `gm` (raises CompileRejected / WorkerCrashed / GraphDescriptionError)."""
    return GraphExecutable(gm, inputs)


__all__ = ["GraphDescriptionError", "GraphExecutable", "compile_piece", "tensor_meta"]
