"""Index bounds checked on the device, as a CUDA kernel's device-side assert checks them.

The scatter-free rewrites (masked.py, retrace.py) compare every index with every position, so an
index out of range matched nothing: index_select and embedding read zeros, scatter_ and index_add
dropped the write, where the CPU raises. A rewrite passes each index tensor through `in_range`
before using it. While make_fx traces, `npu_mlir::in_range` is the identity (the worker's example
index values need not be in range); `lower_in_range` then replaces each call with a gather from
`arange(size)`, whose torch-mlir lowering asserts both bounds on each element. A failed assert ends
the kernel with a status (targets/sim/device_assert.py) that the next synchronization raises.
"""

from __future__ import annotations

import torch

_LIBRARY = torch.library.Library("npu_mlir", "FRAGMENT")
_LIBRARY.define("in_range(Tensor index, SymInt size) -> Tensor")


@torch.library.impl(_LIBRARY, "in_range", "CompositeExplicitAutograd")
def _identity(index: torch.Tensor, size: int) -> torch.Tensor:
    return index.clone()


@torch.library.register_fake("npu_mlir::in_range", lib=_LIBRARY)
def _fake(index: torch.Tensor, size: int) -> torch.Tensor:
    return torch.empty_like(index)


def in_range(index: torch.Tensor, size: int) -> torch.Tensor:
    """`index` itself; a value outside [0, size) fails the kernel that uses it."""
    return torch.ops.npu_mlir.in_range(index, size)


def _emit(graph: torch.fx.Graph, target: torch._ops.OpOverload, args: tuple, value: torch.Tensor,
          **kwargs: object) -> torch.fx.Node:
    node = graph.call_function(target, args, kwargs)
    node.meta["val"] = value  # the importer types each node from its example value
    return node


def lower_in_range(gm: torch.fx.GraphModule) -> None:
    """Each in_range(index, size) in `gm` -> gather(arange(size), 0, index.view(-1)).view(shape)."""
    aten, graph = torch.ops.aten, gm.graph
    for node in [n for n in graph.nodes if n.target is torch.ops.npu_mlir.in_range.default]:
        index, size = node.args
        value = node.meta["val"]
        with graph.inserting_before(node):
            positions = _emit(graph, aten.arange.default, (size,), value.new_empty(size), dtype=torch.int64)
            flat = _emit(graph, aten.view.default, (index, [-1]), value.reshape(-1))
            checked = _emit(graph, aten.gather.default, (positions, 0, flat), value.reshape(-1))
            result = _emit(graph, aten.view.default, (checked, list(value.shape)), value)
        node.replace_all_uses_with(result)
        graph.erase_node(node)
    gm.recompile()
