"""Common-subexpression elimination of AOTAutograd's joint graph, before the min-cut partitioner.

The partitioner's own CSE (torch._functorch.compile_utils.fx_graph_cse) imports
torch._inductor.pattern_matcher, which imports Inductor's lowerings: 0.6 s of CPU in every process
that compiles a training graph, about a fifth of a warm start's (its graphs all loaded from the
kernel cache). This pass does what that one does, without Inductor: a call of a pure op with the
same arguments as an earlier one in the same mutation region is that earlier node; random ops,
mutating ops and impure nodes are never merged, and nodes the graph returns keep their own storage.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.fx as fx


def _key(value: Any) -> Any:
    """A hashable stand-in for a node argument (nodes of the new graph stand for themselves)."""
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, _key(v)) for k, v in value.items())))
    if isinstance(value, float) and value != value:
        return ("nan",)
    return (type(value).__name__, value)


def _mergeable(node: fx.Node) -> bool:
    if node.op != "call_function" or node.is_impure():
        return False
    target = node.target
    if isinstance(target, torch._ops.OpOverload):
        return not target._schema.is_mutable and torch.Tag.nondeterministic_seeded not in target.tags
    return True  # operator.getitem and other Python functions of their arguments


def joint_graph_cse(graph: fx.Graph) -> fx.Graph:
    """`graph` with repeated pure computations merged (a new graph; node metadata kept)."""
    new = fx.Graph()
    env: dict[fx.Node, fx.Node] = {}
    seen: dict[Any, fx.Node] = {}
    returned = set(graph.output_node().all_input_nodes)
    region = 0  # a mutation starts a new region: a value read after it may differ from one before
    for node in graph.nodes:
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload) and \
                node.target._schema.is_mutable:
            region += 1
        if not _mergeable(node) or node in returned:
            env[node] = new.node_copy(node, lambda n: env[n])
            continue
        args = fx.node.map_arg(node.args, lambda n: env[n])
        kwargs = fx.node.map_arg(node.kwargs, lambda n: env[n])
        try:
            key = (node.target, _key(args), _key(kwargs), region)
            hash(key)
        except TypeError:  # an unhashable argument: kept as it is
            env[node] = new.node_copy(node, lambda n: env[n])
            continue
        if key in seen:
            env[node] = seen[key]
        else:
            env[node] = seen[key] = new.node_copy(node, lambda n: env[n])
    return new


__all__ = ["joint_graph_cse"]
