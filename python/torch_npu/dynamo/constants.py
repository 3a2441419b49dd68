"""Host constants of an AOT graph, computed (and moved to npu) once when the graph is compiled.

A graph that builds a tensor from constants (`torch.tensor([...], device=x.device)`, a CPU
`torch.arange(4).to(x.device)`) holds get_attr nodes of tensors AOTAutograd lifted, and host ops
of them: the compiled pieces take only tensor inputs, and a host op would run on every call. Every
node computed from get_attr nodes and arguments alone, in a chain that starts at a get_attr node or
computes on the host, is run here once; what the rest of the graph reads of them becomes a graph
input that each call passes after the caller's (an npu tensor when the chain ends in its transfer to
npu: it is uploaded once). Chains of npu ops alone (`torch.zeros(4, device=x.device)`) stay in the
graph: the compiler fuses them into its kernels instead of keeping their bytes alive.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import torch
from torch._guards import detect_fake_mode
from torch._subclasses.fake_tensor import FakeTensor, unset_fake_temporarily


def _foldable(node: torch.fx.Node, folded: dict[torch.fx.Node, bool]) -> bool | None:
    """Whether `node` is computed from constants alone: None if not, else whether its chain starts at a
    get_attr node or computes on the host."""
    if node.op == "get_attr":
        return True
    target = node.target
    if node.op != "call_function" or not isinstance(target, torch._ops.OpOverload) or target._schema.is_mutable \
            or torch.Tag.nondeterministic_seeded in target.tags:
        return None
    if any(i not in folded for i in node.all_input_nodes):
        return None
    val = node.meta.get("val")
    on_host = isinstance(val, torch.Tensor) and val.device.type == "cpu"
    return on_host or any(folded[i] for i in node.all_input_nodes)


def fold_constants(gm: torch.fx.GraphModule, examples: Sequence[Any]) \
        -> tuple[torch.fx.GraphModule, list[Any], list[torch.Tensor]]:
    """gm with its host constants computed: (graph, examples, the constants every call appends)."""
    folded: dict[torch.fx.Node, bool] = {}
    for node in gm.graph.nodes:
        kind = _foldable(node, folded)
        if kind is not None:
            folded[node] = kind
    # Npu-only chains are left to the compiler; what is folded is whole (its inputs folded too).
    run: set[torch.fx.Node] = set()
    stack = [n for n, rooted in folded.items() if rooted]
    while stack:
        node = stack.pop()
        if node not in run:
            run.add(node)
            stack.extend(node.all_input_nodes)
    boundary = [n for n in gm.graph.nodes if n in run and any(u not in run for u in n.users)]
    if not boundary:
        return gm, list(examples), []
    values: dict[torch.fx.Node, Any] = {}
    with unset_fake_temporarily():
        for node in gm.graph.nodes:
            if node not in run:
                continue
            if node.op == "get_attr":
                values[node] = torch.fx.graph_module._get_attr(gm, node.target)
            else:
                args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs), lambda a: values[a])
                values[node] = node.target(*args, **kwargs)
    constants = [values[n] for n in boundary]
    if any(isinstance(c, FakeTensor) or not isinstance(c, torch.Tensor) for c in constants):
        return gm, list(examples), []  # not a real tensor: left in the graph
    graph = gm.graph
    last = [n for n in graph.nodes if n.op == "placeholder"]
    anchor = last[-1] if last else None
    for k, node in enumerate(boundary):
        if anchor is None:
            with graph.inserting_before(next(iter(graph.nodes))):
                placeholder = graph.placeholder(f"constant_{k}")
        else:
            with graph.inserting_after(anchor):
                placeholder = graph.placeholder(f"constant_{k}")
        placeholder.meta.update(node.meta)
        node.replace_all_uses_with(placeholder)
        anchor = placeholder
    for node in reversed(list(graph.nodes)):
        if node in run:
            graph.erase_node(node)
    graph.lint()
    gm.recompile()
    mode = detect_fake_mode(examples)
    fakes = [mode.from_tensor(c) if mode is not None else c for c in constants]
    return gm, list(examples) + fakes, constants


def with_constants(run: Callable[[list], Any], constants: list[torch.Tensor]) -> Callable[[list], Any]:
    """`run` called with `constants` after the caller's inputs (AOTAutograd's boxed convention)."""
    if not constants:
        return run

    def call(args: list) -> Any:
        return run([*args, *constants])

    call._boxed_call = True
    return call


__all__ = ["fold_constants", "with_constants"]
