"""Graph splits: the nodes npu_mlir cannot lower run as eager npu ops, the rest is compiled.

First by capability (torch.fx's CapabilityBasedPartitioner): mutating ops, random ops rng.py cannot
draw in a graph and anything that is not an aten/prims operator stay out of compiled pieces. Then by rejection: a piece the
compiler refuses is bisected (split_module into its first and second half, each compiled again) down
to single nodes, which run eagerly; their op is remembered so later graphs split around it at once.
Every eager node is counted in compile_stats()["split_nodes"] with the compiler's reason, and the
first one of each op warns. Nothing is handed to Inductor, and a graph is never run eagerly whole
unless every one of its nodes was refused.
"""

from __future__ import annotations

import heapq
import operator
import warnings
from typing import Any, Callable, Sequence

import torch
from torch._guards import detect_fake_mode
from torch.fx.passes.fake_tensor_prop import FakeTensorProp
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupport
from torch.fx.passes.split_module import split_module

from npu_mlir.frontend.fx_graph import GraphDescriptionError, target_name
from torch_npu.dynamo import rng, stats
from torch_npu.dynamo.executable import GraphExecutable
from torch_npu.eager.workers import CompileRejected, WorkerCrashed

COPY = torch.ops.aten.copy_.default
TO_COPY = torch.ops.aten._to_copy.default
# An npu value copied to the host (a CPU parameter's gradient): an eager copy, not a refused node.
TO_HOST = "a device-to-host copy"
_refused: dict[str, str] = {}  # op -> the compiler's reason, for the rest of the process


def _values(node: torch.fx.Node) -> list[torch.Tensor]:
    """The tensors `node` produces (for a copy_ into an input, that input too), from the fake values."""
    val = node.meta.get("val")
    values = list(val) if isinstance(val, (list, tuple)) else [val]
    if node.target == COPY:
        values.append(node.args[0].meta.get("val"))
    return [v for v in values if isinstance(v, torch.Tensor)]


def _why_not(node: torch.fx.Node) -> str | None:
    """Why `node` cannot be in a compiled piece, or None."""
    if node.target is operator.getitem:  # an element of a multi-output node goes where the node goes
        return _why_not(node.args[0]) if node.args[0].op == "call_function" else "an element of an input"
    try:
        name = target_name(node.target)
    except GraphDescriptionError as err:
        return str(err)
    if name in _refused:
        return _refused[name]
    if any(v.device.type == "cpu" for v in _values(node)):
        source = node.args[0].meta.get("val") if node.target == TO_COPY else None
        if isinstance(source, torch.Tensor) and source.device.type != "cpu":
            return TO_HOST
        # Adam's step counts without capturable=True: host scalars stay host ops (a compiled piece may
        # read a 0-d CPU tensor: it is uploaded, executable.py).
        return "it computes on CPU tensors"
    if isinstance(node.target, torch._ops.OpOverload):
        if node.target == COPY and node.args[0].op == "placeholder":
            return None  # an input mutation: the executable writes the input's buffer (executable.py)
        if node.target._schema.is_mutable:
            return "it writes one of its arguments in place"
        if torch.Tag.nondeterministic_seeded in node.target.tags and not rng.supported(node):
            return "it draws random numbers in a way compiled graphs do not yet (a generator argument or an op rng.py lacks)"
    return None


class _Compilable(OperatorSupport):
    def is_node_supported(self, submodules: Any, node: torch.fx.Node) -> bool:
        return node.op == "call_function" and _why_not(node) is None


def _node_name(node: torch.fx.Node) -> str:
    try:
        return target_name(node.target)
    except GraphDescriptionError:
        return str(node.target)


def _run_eagerly(node: torch.fx.Node, reason: str) -> None:
    if node.target is operator.getitem:
        return
    if reason == TO_HOST:
        stats.count("host_copies")
        return
    op = _node_name(node)
    if stats.note_split(op, reason):
        warnings.warn(f"torch.compile(backend='npu-mlir'): {op} runs as an eager npu op, splitting the graph "
                      f"({reason}); torch.npu.compile_stats()['split_nodes'] lists every such op.", stacklevel=2)


def _split(gm: torch.fx.GraphModule, examples: Sequence[Any], part: dict[torch.fx.Node, int]) -> torch.fx.GraphModule:
    """gm as calls of submodules submod_<part>, each call node carrying its inputs' fake values; the
    calls in the order of the parts' first nodes (each part only reads earlier ones)."""
    split = split_module(gm, None, lambda n: part[n], keep_original_order=True)
    mode = detect_fake_mode(examples)
    if mode is None:
        mode = torch._subclasses.FakeTensorMode(allow_non_fake_inputs=True)
        examples = [mode.from_tensor(e) if isinstance(e, torch.Tensor) else e for e in examples]
    with mode:
        FakeTensorProp(split, mode).propagate_dont_convert_inputs(*examples)
    return split


def _pieces(split: torch.fx.GraphModule, compile_child: Callable) -> None:
    """Replace each submodule of `split` by compile_child(name, submodule, its inputs' fake values)."""
    for node in split.graph.nodes:
        if node.op == "call_module":
            examples = [a.meta["val"] for a in node.args]
            setattr(split, node.target, _Piece(compile_child(node.target, getattr(split, node.target), examples)))


class _Piece(torch.nn.Module):
    """A compiled (or eager) piece called from the split graph's code."""

    def __init__(self, run: Callable[[list], Any]) -> None:
        super().__init__()
        self.run = run

    def forward(self, *args: Any) -> Any:
        return self.run(list(args))


def _eager(gm: torch.fx.GraphModule) -> Callable[[list], Any]:
    return lambda args: gm(*args)


def _group_of(node: torch.fx.Node) -> torch.fx.Node:
    """The node whose piece `node` must be in: a getitem's and a copy_'s source, else itself."""
    source = node.args[0] if node.target is operator.getitem else node.args[1] if node.target == COPY else node
    if source.op == "call_function" and source.target is operator.getitem:
        source = source.args[0]
    return source


def compile_or_bisect(gm: torch.fx.GraphModule, examples: Sequence[Any]) -> Callable[[list], Any]:
    """gm compiled whole, else its halves (recursively); a single refused node runs eagerly."""
    try:
        return GraphExecutable(gm, examples)
    except (CompileRejected, WorkerCrashed, GraphDescriptionError) as err:
        reason = str(err).strip().splitlines()[-1][:300] if str(err).strip() else type(err).__name__
        # A multi-output node and its elements stay together, a copy_ with its value: bisect over groups.
        group = {n: _group_of(n) for n in gm.graph.nodes if n.op == "call_function"}
        groups = list(dict.fromkeys(group.values()))
        if len(groups) <= 1:
            for node in group:
                if node.target is operator.getitem:
                    continue
                if node.target != COPY:  # a copy_ is refused for its context, not for what it is
                    _refused[_node_name(node)] = reason
                _run_eagerly(node, reason)
            return _eager(gm)
        first_half = set(groups[: len(groups) // 2])
        part = {n: 0 if n.op == "placeholder" or group.get(n) in first_half else 1 for n in gm.graph.nodes}
        split = _split(gm, examples, part)
        _pieces(split, lambda name, child, child_examples: compile_or_bisect(child, child_examples))
        return _eager(split)


def _draws(node: torch.fx.Node) -> bool:
    """Whether `node` takes Philox counters from the default npu generator when it runs (compiled or eager)."""
    return node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload) and \
        torch.Tag.nondeterministic_seeded in node.target.tags and node.kwargs.get("generator") is None


def _capability_parts(gm: torch.fx.GraphModule) -> dict[torch.fx.Node, int]:
    """Node -> capability partition, each partition convex in the graph whose random nodes are also
    chained in their order (each reads the one before it): a partition then never holds draws from
    both sides of another piece's draw, so the pieces can run in draw order."""
    graph = torch.fx.Graph()
    env: dict[torch.fx.Node, torch.fx.Node] = {}
    graph.output(graph.graph_copy(gm.graph, env))
    draws = [n for n in graph.nodes if _draws(n)]
    for before, node in zip(draws, draws[1:]):
        node.kwargs = {**node.kwargs, "_draws_after": before}  # seen by the partitioner only, never run
    partitions = CapabilityBasedPartitioner(torch.fx.GraphModule(gm, graph), _Compilable(),
                                            allows_single_node_partition=True).propose_partitions()
    original = {copy: node for node, copy in env.items()}
    part = {original[node]: p for p, partition in enumerate(partitions) for node in partition.nodes}
    # An element goes with its multi-output node (the partitioner may leave it with its users when the
    # chain keeps the node out): only tensors cross between pieces.
    for node in part:
        if node.target is operator.getitem and node.args[0] in part:
            part[node] = part[node.args[0]]
    return part


def _in_draw_order(gm: torch.fx.GraphModule, part: dict[torch.fx.Node, int]) \
        -> tuple[torch.fx.GraphModule, dict[torch.fx.Node, int]]:
    """gm (and `part` for its nodes) with each part's nodes contiguous, the parts in an order of their dependencies in which the
    random nodes run in graph order (as eager draws them: the same seed gives the same numbers) and,
    where free, a part whose first node comes earlier runs earlier."""
    nodes = [n for n in gm.graph.nodes if n in part]
    position = {n: i for i, n in enumerate(nodes)}
    members: dict[int, list[torch.fx.Node]] = {}
    for node in nodes:
        members.setdefault(part[node], []).append(node)
    after: dict[int, set[int]] = {p: set() for p in members}
    for node in nodes:
        after[part[node]].update(part[i] for i in node.all_input_nodes if i in part and part[i] != part[node])
    draws = [n for n in nodes if _draws(n)]
    for before, node in zip(draws, draws[1:]):
        if part[before] != part[node]:
            after[part[node]].add(part[before])
    ready = [(position[m[0]], p) for p, m in members.items() if not after[p]]
    heapq.heapify(ready)
    graph = torch.fx.Graph()
    env: dict[torch.fx.Node, torch.fx.Node] = {}
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            env[node] = graph.node_copy(node, lambda x: env[x])
    while ready:
        _, p = heapq.heappop(ready)
        for node in members.pop(p):
            env[node] = graph.node_copy(node, lambda x: env[x])
        for q, waits in after.items():
            if p in waits:
                waits.discard(p)
                if not waits and q in members:
                    heapq.heappush(ready, (position[members[q][0]], q))
    if members:  # _capability_parts made the parts convex with the draw chain: not reached
        raise AssertionError(f"graph pieces with circular dependencies: {sorted(members)}")
    graph.output(torch.fx.node.map_arg(gm.graph.output_node().args[0], lambda x: env[x]))
    return torch.fx.GraphModule(gm, graph), {env[n]: p for n, p in part.items()}


def _boxed(run: Callable[[list], Any]) -> Callable[[list], Any]:
    """`run` marked for AOTAutograd's boxed calling convention (one list of inputs)."""
    if isinstance(run, GraphExecutable):
        return run.boxed()
    run._boxed_call = True
    return run


def compile_graph(gm: torch.fx.GraphModule, examples: Sequence[Any]) -> Callable[[list], Any]:
    """An AOT graph as compiled pieces and eager nodes; called with the graph's inputs as a list."""
    if all(node.op != "call_function" or _why_not(node) is None for node in gm.graph.nodes):
        return _boxed(compile_or_bisect(gm, examples))
    part = _capability_parts(gm)
    compiled = set(part.values())
    # Each node left out is a piece of its own that runs eagerly.
    for node in gm.graph.nodes:
        if node.op not in ("placeholder", "output") and node not in part:
            part[node] = len(compiled) + len(part)
            reason = _why_not(node) if node.op == "call_function" else f"a {node.op} node"
            _run_eagerly(node, reason or "outside every compiled piece")
    # A capability partition may take nodes from both sides of an eager node it does not depend on:
    # the pieces run in an order of their dependencies (and draws), not of their first nodes.
    ordered, part = _in_draw_order(gm, part)
    split = _split(ordered, examples, part)
    _pieces(split, lambda name, child, child_examples: compile_or_bisect(child, child_examples)
            if int(name.removeprefix("submod_")) in compiled else _eager(child))
    return _boxed(_eager(split))
