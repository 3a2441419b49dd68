"""Random ops inside compiled graphs: Philox draws from the npu generator, as eager npu ops make them.

An eager random op reserves round4(numel) Philox counters of the default npu generator and runs the
op's reference (npu_mlir.frontend.references.philox) with that (seed, offset) as kernel parameters
(csrc/aten/RandomOps.cpp). In a compiled piece each random node is replaced by the same reference,
traced to aten ops, reading two scalar parameters the piece takes last: the seed, and the offset the
piece's draws start from. Node i draws from offset + (the counters of the random nodes before it), so
a run that reserves their sum at once (csrc/graph/CompiledGraph::run, which also makes it a
placeholder under NPUGraph capture) gives every node the numbers its eager op would, and advances
the generator as the eager ops would have. No node splits the graph for drawing.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from npu_mlir.frontend.references import philox

aten = torch.ops.aten
PARAM_NAMES = ("philox_seed", "philox_offset")


def _counters(numel: int) -> int:
    return (numel + 3) // 4 * 4  # the generator's offset unit (NpuGeneratorImpl::reservePhilox)


def _like(value: torch.Tensor) -> torch.Tensor:
    """What a reference fills, while it is traced on meta tensors (_inline puts the real device back)."""
    return torch.empty(value.shape, dtype=value.dtype, device="meta")


def _float_args(node: torch.fx.Node) -> list[float]:
    """The node's arguments after its first, schema defaults filled in, generator left out."""
    values = []
    for k, arg in enumerate(node.target._schema.arguments[1:], start=1):
        if arg.name == "generator":
            continue
        values.append(node.args[k] if k < len(node.args) else node.kwargs.get(arg.name, arg.default_value))
    return values


def _dropout(node: torch.fx.Node) -> tuple[Callable, list, int] | None:
    x, p, train = node.args
    if not train or p == 0:  # eager returns (input.clone(), ones) without drawing
        return (lambda x, seed, offset: (x.clone(), torch.ones_like(x, dtype=torch.bool))), [x], 0
    keep = 1.0 - p
    return (lambda x, keep, scale, seed, offset: philox.dropout(x, seed, offset, keep, scale)), \
        [x, keep, 0.0 if keep == 0 else 1.0 / keep], math.prod(x.meta["val"].shape)


def _fill(reference: Callable, *params: float) -> Callable[[torch.fx.Node], tuple[Callable, list, int]]:
    """A node whose result (shape, dtype) is drawn from `reference(like, seed, offset, *params)`."""
    def rewrite(node: torch.fx.Node) -> tuple[Callable, list, int]:
        val = node.meta["val"]
        return (lambda *args: reference(_like(val), args[-2], args[-1], *args[:-2])), list(params), val.numel()
    return rewrite


def _from_input(reference: Callable) -> Callable[[torch.fx.Node], tuple[Callable, list, int]]:
    """A node reference(args[0] (only its shape and dtype), seed, offset, *the node's float args)."""
    def rewrite(node: torch.fx.Node) -> tuple[Callable, list, int]:
        val = node.meta["val"]
        return (lambda *args: reference(_like(val), args[-2], args[-1], *args[:-2])), _float_args(node), \
            math.prod(node.args[0].meta["val"].shape)
    return rewrite


# The random aten ops AOTAutograd's core-ATen graphs hold, as each eager npu op draws them.
REWRITES: dict[Any, Callable[[torch.fx.Node], tuple[Callable, list, int] | None]] = {
    aten.native_dropout.default: _dropout,
    aten.rand.default: _fill(philox.uniform, 0.0, 1.0),
    aten.rand_like.default: _fill(philox.uniform, 0.0, 1.0),
    aten.randn.default: _fill(philox.normal, 0.0, 1.0),
    aten.randn_like.default: _fill(philox.normal, 0.0, 1.0),
    aten.bernoulli.p: _from_input(philox.bernoulli),
    aten.uniform.default: _from_input(philox.uniform),
    aten.normal_functional.default: _from_input(philox.normal),
}


def supported(node: torch.fx.Node) -> bool:
    """Whether `node` is a random op a compiled piece draws itself."""
    return node.target in REWRITES and node.kwargs.get("generator") is None and "val" in node.meta \
        and all(not isinstance(a, torch.fx.Node) or "val" in a.meta for a in node.args)


def _meta(value: Any) -> torch.Tensor:
    if isinstance(value, torch.fx.Node):
        v = value.meta["val"]
        return torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device="meta")
    return torch.empty((), dtype=torch.float64, device="meta")


def _inline(graph: torch.fx.Graph, node: torch.fx.Node, fn: Callable, args: list, params: list[torch.fx.Node],
            start: int) -> None:
    """Replace `node` by `fn` traced to aten ops: args (nodes, or floats made 0-d tensors), seed, offset + start."""
    device = node.meta["val"].device if isinstance(node.meta["val"], torch.Tensor) else node.meta["val"][0].device
    seed, offset = (torch.empty((), dtype=torch.int64, device="meta") for _ in range(2))
    traced = make_fx(lambda *a: fn(*a[:-2], a[-2], a[-1] + start))(*[_meta(a) for a in args], seed, offset)
    with graph.inserting_before(node):
        env: dict[torch.fx.Node, Any] = {}
        placeholders = [n for n in traced.graph.nodes if n.op == "placeholder"]
        for p, a in zip(placeholders, list(args) + params):
            env[p] = a if isinstance(a, torch.fx.Node) else graph.call_function(
                aten.full.default, ([], a), {"dtype": torch.float64, "device": device})
        for n in traced.graph.nodes:
            if n.op == "call_function":
                env[n] = graph.node_copy(n, lambda x: env[x])
                if isinstance(env[n].kwargs.get("device"), torch.device):
                    env[n].kwargs = {**env[n].kwargs, "device": device}
            elif n.op == "output":
                result = torch.fx.node.map_arg(n.args[0], lambda x: env[x])
    if isinstance(result, (tuple, list)):
        for user in list(node.users):
            user.replace_all_uses_with(result[user.args[1]])
            graph.erase_node(user)
    else:
        node.replace_all_uses_with(result)
    graph.erase_node(node)


def functionalize(gm: torch.fx.GraphModule) -> tuple[torch.fx.GraphModule, int]:
    """`gm` with its random nodes drawn from two trailing placeholders (PARAM_NAMES), and the Philox
    counters one run takes; (gm, 0) unchanged when it draws nothing."""
    nodes = [n for n in gm.graph.nodes if n.op == "call_function" and supported(n)]
    if not nodes:
        return gm, 0
    graph = torch.fx.Graph()
    env: dict[torch.fx.Node, torch.fx.Node] = {}
    out = graph.graph_copy(gm.graph, env)
    graph.output(out)
    # After the tensors; first in a piece that takes none (torch.rand alone, split off by a refusal).
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    where = graph.inserting_after(placeholders[-1]) if placeholders else graph.inserting_before(next(iter(graph.nodes)))
    with where:
        seed = graph.placeholder(PARAM_NAMES[0])
    with graph.inserting_after(seed):
        offset = graph.placeholder(PARAM_NAMES[1])
    start = 0
    for original in nodes:
        fn, args, count = REWRITES[original.target](env[original])
        _inline(graph, env[original], fn, args, [seed, offset], start)
        start += _counters(count)
    if not start:  # only dropouts that do not draw (p = 0, eval)
        graph.erase_node(offset)
        graph.erase_node(seed)
    return torch.fx.GraphModule(gm, graph), start
