"""Graphs of Dynamo's symbolic shapes (dynamic=True, mark_dynamic): compiled once for any size where they can be.

The kernels, their tiling and the buffer plan are static. A graph that acts on each row of one dynamic
size on its own (elementwise ops, reductions and softmax / layer norm over other dims, matmuls whose
rows or batch are that size, views that keep it outermost) is compiled once for a chunk of it, as
long as the first size it is called with, and every call runs that launch list over its own size
chunk by chunk, each chunk's addresses advanced in C++ (ChunkPlan in csrc/graph/CompiledGraph.h):
a second and a third size compile nothing. A graph that also sums over the size (a loss mean, the
weight and bias gradients of a batch: sum / mean over it, x.t() @ grad) or reads it as a value
(mse_loss's 2 / numel) compiles the same way, each chunk adding its rows' part into an accumulator
and the size a scalar parameter of the call (_Accumulating). The other dynamic sizes of such a graph
are bound per call, a new value of one of them compiles again. A size below every chunk compiled so
far compiles a chunk of it. A graph that mixes rows of the size otherwise (reads a sum before every
chunk added to it, as batch norm's normalization does; a max or a scan over the size, an input
mutation or a random op a chunk would apply twice, an op not known to act row by row) is compiled
per concrete shape instead, each compile after the first counted in compile_stats()["recompiles"]
and the reason in compile_stats()["per_shape"].
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Sequence

import sympy
import torch
from torch.fx.experimental.proxy_tensor import make_fx

from npu_mlir.frontend.fx_graph import GraphDescriptionError, target_name
from torch_npu.dynamo import stats
from torch_npu.dynamo.executable import GraphExecutable
from torch_npu.eager.workers import CompileRejected, WorkerCrashed

aten = torch.ops.aten
Dyn = tuple[int, sympy.Expr] | None  # (dim, scale): the tensor's dim whose size is scale * the chunked symbol

_SAME_SHAPE = {aten.clone.default, aten._to_copy.default, aten.alias.default, aten.detach.default}
# Ops that only relabel, select or broadcast elements: the dynamic dim must survive with its scale.
_RELABELS = {aten.permute.default, aten.transpose.int, aten.t.default, aten.unsqueeze.default, aten.squeeze.dim,
             aten.squeeze.dims, aten.squeeze.default, aten.expand.default, aten.slice.Tensor, aten.select.int,
             aten.split.Tensor, aten.split_with_sizes.default, aten.unbind.int}
_RESHAPES = {aten.view.default, aten._unsafe_view.default, aten.reshape.default}
_REDUCTIONS = {aten.sum.dim_IntList, aten.mean.dim, aten.amax.default, aten.amin.default, aten.prod.dim_int,
               aten.any.dim, aten.any.dims, aten.all.dim, aten.argmax.default, aten.argmin.default, aten.max.dim,
               aten.min.dim, aten.var.correction, aten.std.correction, aten.var_mean.correction,
               aten.logsumexp.default, aten.cumsum.default}
_DIM_AT = {aten._softmax.default: 1, aten._log_softmax.default: 1, aten._softmax_backward_data.default: 2,
           aten._log_softmax_backward_data.default: 2, aten.cat.default: 1, aten.index_select.default: 1}
# Constant fills: every chunk holds the same values.
_FILLS = {aten.full.default, aten.zeros.default, aten.ones.default, aten.empty.memory_format,
          aten.scalar_tensor.default, aten.new_zeros.default, aten.new_ones.default, aten.new_full.default,
          aten.new_empty.default, aten.full_like.default, aten.zeros_like.default, aten.ones_like.default,
          aten.empty_like.default}


class NotGeneric(Exception):
    """Why a graph cannot run chunk by chunk over a symbol."""


def _expr(value: Any) -> sympy.Expr:
    return value.node.expr if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)) else sympy.sympify(value)


def _tensors(val: Any) -> list:
    return list(val) if isinstance(val, (list, tuple)) else [val]


def _dyn(val: torch.Tensor, symbol: sympy.Symbol) -> Dyn:
    """The dim of `val` that holds `symbol`, with its scale."""
    found = []
    for d, size in enumerate(val.shape):
        e = _expr(size)
        if symbol in e.free_symbols:
            scale = sympy.simplify(e / symbol)
            if symbol in scale.free_symbols:
                raise NotGeneric(f"a size {e} that is not a multiple of {symbol}")
            found.append((d, scale))
    if len(found) > 1:
        raise NotGeneric(f"a tensor with {symbol} in {len(found)} dims")
    return found[0] if found else None


def _dims(node: torch.fx.Node) -> list[int]:
    """The dims a reduction node reduces (normalized); raises for a reduction over every dim."""
    rank = len(node.args[0].meta["val"].shape)
    dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
    if dims is None:
        raise NotGeneric(f"{target_name(node.target)} reduces every dim")
    dims = [dims] if isinstance(dims, int) else list(dims)
    return [d % rank for d in dims] if dims else list(range(rank))


def _keepdim(node: torch.fx.Node) -> bool:
    if node.target in (aten.var.correction, aten.std.correction, aten.var_mean.correction):
        return bool(node.kwargs.get("keepdim", False))
    return bool(node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False))


class _Rows:
    """The row-by-row analysis of a graph over one symbol: each tensor node's Dyn, or NotGeneric.

    A view may merge the size with a dim before it ([16, s, 64] -> [16 * s, 64]): `outer` keeps, per
    tensor, the factor of its dynamic dim outside the size (1 unless merged so); ops that act row by
    row take such a dim as any other, and inputs and outputs must hold the size unmerged."""

    def __init__(self, gm: torch.fx.GraphModule, symbol: sympy.Symbol) -> None:
        self.symbol = symbol
        self.dyn: dict[torch.fx.Node, list[Dyn]] = {}
        self.outer: dict[torch.fx.Node, sympy.Expr] = {}
        # Sums over the size: a chunk computes its rows' part, which the call adds up (_accumulating).
        # Per reduction node: (its argument whose rows the last chunk masks, that argument's dim, scale).
        self.masked: dict[torch.fx.Node, tuple[int, int, sympy.Expr]] = {}
        self.partial: set[torch.fx.Node] = set()  # the reductions, and linear functions of them only
        self.size_values: list[torch.fx.Node] = []  # nodes reading the size as a value (a size parameter)
        for node in gm.graph.nodes:
            val = node.meta.get("val")
            if node.op == "output":
                continue
            if not isinstance(val, torch.Tensor) and not (isinstance(val, (list, tuple)) and val and
                                                          all(isinstance(v, torch.Tensor) for v in val)):
                if isinstance(val, (list, tuple)) and any(isinstance(v, torch.Tensor) for v in val):
                    raise NotGeneric(f"{node.name} returns tensors mixed with other values")
                continue  # a SymInt, a number: bound per call
            self.dyn[node] = [_dyn(v, symbol) for v in _tensors(val)]
            self.outer[node] = sympy.Integer(1)
            if node.op == "call_function":
                self._check(node)
                self._propagate_outer(node)

    def _propagate_outer(self, node: torch.fx.Node) -> None:
        """A row-by-row op's outputs keep its inputs' outer factor (a view's is set by _reshape)."""
        if node.target in _RESHAPES:
            return
        source = node.args[0] if node.target is operator.getitem else None
        outers = {self.outer[a] for a in ([source] if source is not None else node.all_input_nodes)
                  if a in self.dyn and self.of(a) is not None}
        if len(outers) > 1:
            raise NotGeneric(f"{node.name} combines rows of the dynamic size merged differently")
        if outers:
            self.outer[node] = outers.pop()

    def of(self, value: Any) -> Dyn:
        return self.dyn[value][0] if isinstance(value, torch.fx.Node) and value in self.dyn else None

    def _check(self, node: torch.fx.Node) -> None:
        target = node.target
        if target is operator.getitem:
            return
        try:
            name = target_name(target)
        except GraphDescriptionError as err:
            raise NotGeneric(str(err)) from err
        inputs = [self.of(a) for a in node.all_input_nodes if a in self.dyn]
        held = [d for d in inputs if d is not None]
        outs = self.dyn[node]
        if any(a in self.partial for a in node.all_input_nodes):
            self._linear(node, name)
            return
        value_args = [k for k, a in enumerate(node.args) if isinstance(a, torch.fx.Node) and
                      isinstance(a.meta.get("val"), (torch.SymInt, torch.SymFloat)) and
                      self.symbol in _expr(a.meta["val"]).free_symbols]
        if value_args and target not in _RESHAPES | _RELABELS:
            # x / x.shape[0]: a chunk would compute with its own extent, so the size is a scalar
            # parameter the call sets (ChunkPlan), read where a pointwise op or scalar_tensor takes it
            # (_accumulating rewrites those)
            pointwise = isinstance(target, torch._ops.OpOverload) and torch.Tag.pointwise in target.tags
            if not (target == aten.scalar_tensor.default or pointwise and _tensor_overload(target) is not None) or \
                    any(isinstance(node.args[k].meta["val"], torch.SymFloat) for k in value_args):
                raise NotGeneric(f"{name} takes the dynamic size as a value")
            self.size_values.append(node)
            if target == aten.scalar_tensor.default:
                return
        if target == aten.copy_.default or (isinstance(target, torch._ops.OpOverload) and target._schema.is_mutable):
            raise NotGeneric(f"{name} writes an input in place (a chunk that overlaps the one before it would read its writes)")
        if isinstance(target, torch._ops.OpOverload) and torch.Tag.nondeterministic_seeded in target.tags:
            raise NotGeneric(f"{name} draws random numbers (chunks would draw other numbers than one call)")
        if target in _FILLS:
            return
        if not held:
            if any(o is not None for o in outs) and target not in _RELABELS:
                raise NotGeneric(f"{name} makes the dynamic size from no input that holds it")
            return
        scale = held[0][1]
        if any(sympy.simplify(d[1] - scale) != 0 for d in held):
            raise NotGeneric(f"{name} combines tensors holding {self.symbol} with different scales")
        if name == "aten.mm.default" or name == "aten.addmm.default":
            a, b = (node.args[1], node.args[2]) if name == "aten.addmm.default" else node.args[:2]
            da, db = self.of(a), self.of(b)
            want = (0 if da is not None and da[0] == 0 and db is None else
                    1 if da is None and db is not None and db[0] == 1 else None)
            if want is None and name == "aten.mm.default" and da is not None and db is not None and \
                    da[0] == 1 and db[0] == 0:
                self._sum(node, 1, 0)  # a weight gradient: x.t() @ grad over the rows
                return
            if want is None:
                raise NotGeneric(f"{name} contracts over the dynamic size")
            self._expect(node, name, [(want, scale)], right_aligned=name == "aten.addmm.default")
            return
        if name == "aten.bmm.default":
            da, db = self.of(node.args[0]), self.of(node.args[1])
            want = (0 if da is not None and db is not None and da[0] == 0 and db[0] == 0 else
                    1 if da is not None and da[0] == 1 and db is None else
                    2 if da is None and db is not None and db[0] == 2 else None)
            if want is None and da is not None and db is not None and da[0] == 2 and db[0] == 1:
                self._sum(node, 1, 1)
                return
            if want is None:
                raise NotGeneric(f"{name} contracts over the dynamic size")
            self._expect(node, name, [(want, scale)])
            return
        if name == "aten.embedding.default":
            if self.of(node.args[0]) is not None:
                raise NotGeneric(f"{name} looks rows up in a table of the dynamic size")
            self._keep(node, name, scale)
            return
        if target in (aten.sum.default, aten.mean.default) or \
                target in (aten.sum.dim_IntList, aten.mean.dim) and held[0][0] in _dims(node):
            self._sum(node, 0, held[0][0])
            return
        if target in _REDUCTIONS or target in _DIM_AT or target == aten.native_layer_norm.default:
            d = held[0][0]
            if target in _REDUCTIONS:
                dims = _dims(node)
            elif target == aten.native_layer_norm.default:
                rank = len(node.args[0].meta["val"].shape)
                dims = list(range(rank - len(node.args[1]), rank))
            else:
                dims = [node.args[_DIM_AT[target]] % len(node.args[0].meta["val"].shape)] \
                    if target != aten.cat.default else [node.args[1] if len(node.args) > 1 else 0]
            if any(x is not None and x[0] != d for x in inputs) and target != aten.cat.default:
                raise NotGeneric(f"{name} takes the dynamic size in different dims")
            if d in dims:
                raise NotGeneric(f"{name} reduces or indexes along the dynamic size")
            if target == aten.cat.default and any(self.of(t) is None or self.of(t)[0] != d for t in node.args[0]):
                raise NotGeneric(f"{name} joins tensors of which not all hold the dynamic size in one dim")
            shift = 0 if target not in _REDUCTIONS or _keepdim(node) or target == aten.cumsum.default else \
                sum(1 for x in dims if x < d)
            self._expect(node, name, [(d - shift, scale)])
            return
        if target in _RESHAPES:
            self._reshape(node, name, held[0])
            return
        if target in _RELABELS or target in _SAME_SHAPE:
            self._keep(node, name, scale)
            return
        if isinstance(target, torch._ops.OpOverload) and torch.Tag.pointwise in target.tags:
            self._expect(node, name, [(self.dyn[node][0][0] if self.dyn[node][0] else -1, scale)], right_aligned=True)
            return
        raise NotGeneric(f"{name} is not known to act on each row of the dynamic size on its own")

    def _sum(self, node: torch.fx.Node, arg: int, dim: int) -> None:
        """`node` sums argument `arg` over the size (held in its `dim`): a partial sum per chunk."""
        source = node.args[arg]
        if sympy.simplify(self.outer[source] - 1) != 0:
            raise NotGeneric(f"{target_name(node.target)} sums over the dynamic size merged into a dim with others")
        if any(o is not None for o in self.dyn[node]):
            raise NotGeneric(f"{target_name(node.target)} sums over the dynamic size and keeps it")
        if node.meta["val"].dtype in (torch.float16, torch.bfloat16):
            # the accumulator would add the chunks' parts in half precision, where one kernel adds in f32
            raise NotGeneric(f"{target_name(node.target)} sums over the dynamic size in {node.meta['val'].dtype}")
        self.masked[node] = (arg, dim, self.of(source)[1])
        self.partial.add(node)

    def _linear(self, node: torch.fx.Node, name: str) -> None:
        """A node reading a partial sum is one too when it is linear in it (the chunks' parts then add up
        to the call's value): a view, a scaling by a value every chunk holds alike, a sum of two."""
        target = node.target
        tensors = node.all_input_nodes
        partial = [a for a in tensors if a in self.partial]
        others = [a for a in tensors if a not in self.partial]
        static = all(self.of(a) is None and isinstance(a.meta.get("val"), torch.Tensor) for a in others)
        linear = (
            (target in _RESHAPES | _RELABELS | {aten.clone.default, aten.alias.default, aten.neg.default}
             and len(tensors) == 1) or
            (target == aten.mul.Tensor and len(partial) == 1 and static) or
            (target == aten.div.Tensor and node.args[0] in self.partial and len(partial) == 1 and static) or
            (target in (aten.add.Tensor, aten.sub.Tensor) and len(partial) == 2 and not others and
             not isinstance(node.kwargs.get("alpha"), torch.fx.Node)))
        if not linear:
            raise NotGeneric(f"{name} reads a sum over the dynamic size before every chunk has added to it")
        self.partial.add(node)

    def _keep(self, node: torch.fx.Node, name: str, scale: sympy.Expr) -> None:
        for out in self.dyn[node]:
            if out is None or sympy.simplify(out[1] - scale) != 0:
                raise NotGeneric(f"{name} does not keep the dynamic size in a dim of its own")

    def _expect(self, node: torch.fx.Node, name: str, wanted: list[tuple[int, sympy.Expr]],
                right_aligned: bool = False) -> None:
        """Every output holds the size in the wanted dim; with `right_aligned` every input that holds
        it does so in the dim broadcasting aligns with it (others broadcast along it)."""
        dim, scale = wanted[0]
        for out in self.dyn[node]:
            if out is None or out[0] != dim or sympy.simplify(out[1] - scale) != 0:
                raise NotGeneric(f"{name} does not keep the dynamic size in dim {dim}")
        if right_aligned:
            rank = len(_tensors(node.meta["val"])[0].shape)
            for a in node.all_input_nodes:
                d = self.of(a)
                if d is not None and d[0] + rank - len(a.meta["val"].shape) != dim:
                    raise NotGeneric(f"{name} broadcasts the dynamic size into another dim")

    def _reshape(self, node: torch.fx.Node, name: str, source: tuple[int, sympy.Expr]) -> None:
        """A view keeps each row of the size whole when as many elements come before and after the
        size in the output as in the input; the output's dim holding it may merge it with dims
        before it (its outer factor)."""
        out = self.dyn[node][0]
        if out is None:
            raise NotGeneric(f"{name} merges the dynamic size into a dim with others")
        shape_in = [_expr(s) for s in node.args[0].meta["val"].shape]
        shape_out = [_expr(s) for s in node.meta["val"].shape]
        outer_in = self.outer[node.args[0]]
        before = sympy.prod(shape_in[:source[0]]) * outer_in
        after = source[1] / outer_in * sympy.prod(shape_in[source[0] + 1:])
        outer_out = sympy.simplify(before / sympy.prod(shape_out[:out[0]]))
        if self.symbol in outer_out.free_symbols or not outer_out.is_positive:
            raise NotGeneric(f"{name} reorders rows of the dynamic size")
        if sympy.simplify(out[1] / outer_out * sympy.prod(shape_out[out[0] + 1:]) - after) != 0:
            raise NotGeneric(f"{name} reorders rows of the dynamic size")
        self.outer[node] = outer_out


def _tensor_overload(target: torch._ops.OpOverload) -> torch._ops.OpOverload | None:
    """The overload of a pointwise op taking a tensor where `target` takes a number (a size parameter)."""
    if target._overloadname == "Tensor":
        return target
    packet = getattr(torch.ops.aten, target._schema.name.split("::")[-1], None)
    return getattr(packet, "Tensor", None) if target._overloadname == "Scalar" and packet is not None else None


def _outermost(val: torch.Tensor, dyn: Dyn, binding: dict) -> bool:
    """Whether the dynamic dim of `val` is outermost but for dims of one element (its rows are then
    contiguous and the other strides do not depend on the size)."""
    return dyn is None or all(int(_expr(s).subs(binding)) == 1 for s in val.shape[:dyn[0]])


def _specialize(gm: torch.fx.GraphModule, binding: dict, drop_outputs: set[int]) -> torch.fx.GraphModule:
    """`gm` with every symbolic integer node replaced by its value under `binding` (tensor nodes keep
    their symbolic metadata) and the outputs at `drop_outputs` left out."""
    graph = torch.fx.Graph()
    env: dict[torch.fx.Node, Any] = {}
    for node in gm.graph.nodes:
        val = node.meta.get("val")
        if node.op == "output":
            outs = list(node.args[0])
            graph.output(tuple(torch.fx.node.map_arg(v, lambda x: env[x]) for i, v in enumerate(outs)
                               if i not in drop_outputs))
        elif isinstance(val, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            if node.op == "placeholder":  # kept (the call passes it), read by no node
                graph.node_copy(node, lambda x: env[x])
            value = _expr(val).subs(binding)
            env[node] = int(value) if isinstance(val, torch.SymInt) else bool(value) if isinstance(val, torch.SymBool) \
                else float(value)
        else:
            env[node] = graph.node_copy(node, lambda x: env[x])
    return torch.fx.GraphModule(gm, graph)


SIZE_PARAMS = ("dyn_size", "dyn_first_row")  # the scalar parameters of ChunkPlan (size, first row)


class _Accumulating:
    """The chunk graph of a graph that sums over its dynamic size (or reads the size as a value).

    Each chunk computes its rows' part of every sum: a reduction's argument is masked to zero in the
    rows before the `dyn_first_row` parameter (the last chunk overlaps the one before it), a mean is
    that sum divided by the count it takes from the `dyn_size` parameter, and each returned sum is
    added into an accumulator input the call zeroes (its result written into the accumulator's
    buffer, executable.py's input mutation). The size as a value is `dyn_size` too. Sums are added
    chunk by chunk: exact as sums go, in another order than one kernel's."""

    def __init__(self, gm: torch.fx.GraphModule, rows: _Rows, binding: dict, extent: int) -> None:
        self.rows, self.binding, self.extent = rows, binding, extent
        graph = torch.fx.Graph()
        env: dict[torch.fx.Node, torch.fx.Node] = {}
        returned = graph.graph_copy(gm.graph, env)
        self.graph, self.env = graph, env
        placeholders = [n for n in graph.nodes if n.op == "placeholder"]
        self.accumulators: list[tuple[list[int], torch.dtype, torch.device]] = []
        accumulated: dict[torch.fx.Node, torch.fx.Node] = {}
        outputs = list(returned) if isinstance(returned, (tuple, list)) else [returned]
        partial = {env[n] for n in rows.partial}
        last = placeholders[-1]
        for i, value in enumerate(outputs):
            if value not in partial:
                continue
            if value not in accumulated:
                val = self._original(value).meta["val"]
                shape = [int(_expr(d).subs(binding)) for d in val.shape]
                with graph.inserting_after(last):
                    acc = last = graph.placeholder(f"dyn_accumulator_{len(self.accumulators)}")
                self.accumulators.append((shape, val.dtype, val.device))
                with graph.inserting_after(value):
                    total = graph.call_function(aten.add.Tensor, (acc, value))
                with graph.inserting_after(total):
                    accumulated[value] = graph.call_function(aten.copy_.default, (acc, total))
            outputs[i] = accumulated[value]
        with graph.inserting_after(last):
            self.size = graph.placeholder(SIZE_PARAMS[0])
        with graph.inserting_after(self.size):
            self.first_row = graph.placeholder(SIZE_PARAMS[1])
        for node in rows.size_values:
            self._size_value(env[node], node)
        for node, (arg, dim, scale) in rows.masked.items():
            self._mask(env[node], node, arg, dim, scale)
        graph.output(tuple(outputs) if isinstance(returned, (tuple, list)) else outputs[0])
        for param in (self.size, self.first_row):
            if not param.users:
                graph.erase_node(param)
        graph.eliminate_dead_code()
        self.gm = torch.fx.GraphModule(gm, graph)

    def _original(self, node: torch.fx.Node) -> torch.fx.Node:
        return next(k for k, v in self.env.items() if v is node)

    def _count(self, expr: sympy.Expr, before: torch.fx.Node) -> Any:
        """`expr` of the size as graph nodes reading the size parameter (other symbols bound per call)."""
        expr = sympy.expand(sympy.sympify(expr).subs({s: v for s, v in self.binding.items() if s is not self.rows.symbol}))
        graph = self.graph

        def build(e: sympy.Expr) -> Any:
            if e.is_Integer:
                return int(e)
            if e == self.rows.symbol:
                return self.size
            if e.is_Add or e.is_Mul:
                terms = [build(t) for t in e.args]
                op = aten.add.Tensor if e.is_Add else aten.mul.Tensor
                value = terms[0]
                for t in terms[1:]:
                    if isinstance(value, int) and isinstance(t, int):
                        value = value + t if e.is_Add else value * t
                    else:
                        a, b = (value, t) if isinstance(value, torch.fx.Node) else (t, value)
                        with graph.inserting_before(before):
                            value = graph.call_function(op, (a, b))
                return value
            raise NotGeneric(f"a size {e} the graph computes with")
        return build(expr)

    def _size_value(self, node: torch.fx.Node, original: torch.fx.Node) -> None:
        graph = self.graph
        if original.target == aten.scalar_tensor.default:
            value = self._count(_expr(original.args[0].meta["val"]), node)
            dtype = node.kwargs.get("dtype") or torch.get_default_dtype()
            with graph.inserting_before(node):
                cast = graph.call_function(torch.ops.prims.convert_element_type.default, (value, dtype))
            node.replace_all_uses_with(cast)
            graph.erase_node(node)
            return
        args = list(node.args)
        for k, (new, old) in enumerate(zip(node.args, original.args)):
            if isinstance(old, torch.fx.Node) and isinstance(old.meta.get("val"), torch.SymInt) and \
                    self.rows.symbol in _expr(old.meta["val"]).free_symbols:
                args[k] = self._count(_expr(old.meta["val"]), node)
        node.args = tuple(args)
        node.target = _tensor_overload(original.target)

    def _mask(self, node: torch.fx.Node, original: torch.fx.Node, arg: int, dim: int, scale: sympy.Expr) -> None:
        """Argument `arg` of `node` zero in the chunk's rows before dyn_first_row; a mean divides the sum."""
        graph = self.graph
        source = original.args[arg].meta["val"]
        factor = int(scale.subs(self.binding))
        rows = self.extent * factor
        with graph.inserting_before(node):
            iota = graph.call_function(aten.arange.start_step, (0, rows, 1),
                                       {"dtype": torch.int64, "device": source.device})
            first = self.first_row if factor == 1 else graph.call_function(aten.mul.Tensor, (self.first_row, factor))
            keep = graph.call_function(aten.ge.Tensor, (iota, first))
            keep = graph.call_function(aten.view.default, (keep, [rows] + [1] * (source.dim() - 1 - dim)))
            zero = graph.call_function(aten.scalar_tensor.default, (0,), {"dtype": source.dtype, "device": source.device})
            masked = graph.call_function(aten.where.self, (keep, node.args[arg], zero))
        args = list(node.args)
        args[arg] = masked
        node.args = tuple(args)
        if original.target in (aten.mean.default, aten.mean.dim):
            dims = list(range(source.dim())) if original.target == aten.mean.default else _dims(original)
            count = self._count(sympy.prod([_expr(source.shape[d]) for d in dims]), node)
            with graph.inserting_before(node):
                total = graph.call_function(aten.sum.dim_IntList, (masked, dims, _keepdim(original)),
                                            {"dtype": node.kwargs["dtype"]} if node.kwargs.get("dtype") else {})
                count = graph.call_function(torch.ops.prims.convert_element_type.default, (count, source.dtype)) \
                    if isinstance(count, torch.fx.Node) else count
                mean = graph.call_function(aten.div.Tensor, (total, count))
            node.replace_all_uses_with(mean)
            graph.erase_node(node)


class DynamicGraph:
    """An AOT graph with symbolic shapes, called (boxed) with concrete arguments."""

    def __init__(self, gm: torch.fx.GraphModule, examples: Sequence[Any], compile_static: Callable) -> None:
        # AOTAutograd's boxed convention; an instance attribute, which torch._dynamo.disable's wrapper of
        # a backward copies (a class attribute is lost there).
        self._boxed_call = True
        self.gm = gm
        self.compile_static = compile_static
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        # Where each symbol is read from a call: (argument, dim or None for an integer argument).
        self.sources: dict[sympy.Symbol, tuple[int, int | None]] = {}
        for k, node in enumerate(placeholders):
            val = node.meta.get("val", examples[k])
            sizes = [(d, s) for d, s in enumerate(val.shape)] if isinstance(val, torch.Tensor) else [(None, val)]
            for d, size in sizes:
                e = _expr(size)
                if isinstance(e, sympy.Symbol):
                    self.sources.setdefault(e, (k, d))
        self.outputs = list(gm.graph.output_node().args[0])
        self.symbolic_outputs = {i for i, v in enumerate(self.outputs)
                                 if isinstance(v, torch.fx.Node) and not isinstance(v.meta.get("val"), torch.Tensor)
                                 or not isinstance(v, (torch.fx.Node, type(None)))}
        self.rows: _Rows | None = None
        self.reason = ""
        for symbol in self.sources:
            try:
                self.rows = _Rows(gm, symbol)
                self._check_boundary(placeholders)
                break
            except NotGeneric as err:
                self.rows = None
                self.reason = self.reason or str(err)
        if not self.sources:
            self.reason = "no dynamic size is read from an input"
        self.chunked: dict[tuple, list[tuple[int, Callable]]] = {}
        self.static: dict[tuple, Callable] = {}
        self.compiles = 0

    def _check_boundary(self, placeholders: list[torch.fx.Node]) -> None:
        """Inputs and outputs holding the size hold it outermost; outputs are no views of inputs."""
        rows = self.rows
        unit = {s: 2 for s in self.sources}  # sizes Dynamo keeps symbolic are >= 2
        for node in placeholders + [v for v in self.outputs if isinstance(v, torch.fx.Node)]:
            val = node.meta.get("val")
            if isinstance(val, torch.Tensor):
                dyn = rows.of(node)
                if dyn is not None and sympy.simplify(rows.outer[node] - 1) != 0:
                    raise NotGeneric(f"{node.name} holds the dynamic size merged into a dim with others")
                if not _outermost(val, dyn, unit):
                    raise NotGeneric(f"{node.name} holds the dynamic size behind a dim of more than one element")
                if node.op == "call_function" and node.target in _RELABELS | _RESHAPES and dyn is not None:
                    base = node
                    while base.op == "call_function" and base.target in _RELABELS | _RESHAPES:
                        base = base.args[0]
                    if base.op == "placeholder":
                        raise NotGeneric(f"{node.name} returns a view of an input of the dynamic size")
        # 0-d host scalars a decomposition makes of the size and constants (mse_loss's 2 / numel) are
        # computed in the graph (a kernel does not know devices), unless the graph returns them
        returned = {v for v in self.outputs if isinstance(v, torch.fx.Node)}
        if any(n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload) and
               any(isinstance(v, torch.Tensor) and v.device.type == "cpu" and (v.dim() > 0 or n in returned)
                   for v in _tensors(n.meta.get("val")))
               for n in self.gm.graph.nodes):
            raise NotGeneric("it computes on CPU tensors (the graph splits)")

    def _binding(self, args: list) -> dict:
        return {s: (args[k].size(d) if d is not None else int(args[k])) for s, (k, d) in self.sources.items()}

    def __call__(self, args: list) -> list:
        binding = self._binding(args)
        if self.rows is not None:
            run = self._chunk_plan(args, binding)
            if run is not None:
                outs = run(list(args))
                return self._with_symbolic(outs, binding)
        key = tuple(binding.values())
        run = self.static.get(key)
        if run is None:
            self._count_compile()
            static = make_fx(self.gm, tracing_mode="fake")(*args)
            output = static.graph.output_node()  # its integers are the call's, put back by _with_symbolic
            output.args = (tuple(v for i, v in enumerate(output.args[0]) if i not in self.symbolic_outputs),)
            static.recompile()
            run = self.static[key] = self.compile_static(static, list(args))
        return self._with_symbolic(run(list(args)), binding)

    def _count_compile(self) -> None:
        if self.compiles:
            stats.count("recompiles")
        else:
            stats.note_per_shape(self.reason)
        self.compiles += 1

    def _with_symbolic(self, tensors: list, binding: dict) -> list:
        """The graph's outputs: the chunked run's tensors with its integer outputs in their places."""
        if not self.symbolic_outputs:
            return tensors
        it = iter(tensors)
        return [(int(_expr(v.meta["val"]).subs(binding)) if isinstance(v, torch.fx.Node) else v)
                if i in self.symbolic_outputs else next(it) for i, v in enumerate(self.outputs)]

    def _chunk_plan(self, args: list, binding: dict) -> Callable | None:
        """The chunked executable for this call (compiled for a chunk of its size when no chunk so far
        fits), None when the graph turned out not to compile chunked (it then runs per shape)."""
        symbol = self.rows.symbol
        size = binding[symbol]
        key = tuple(v for s, v in binding.items() if s is not symbol)
        plans = self.chunked.setdefault(key, [])
        fitting = [run for extent, run in plans if extent <= size]
        if fitting:
            return fitting[-1]
        chunk_binding = {**binding, symbol: size}
        try:
            run = self._compile_chunked(args, chunk_binding, size)
        except (NotGeneric, CompileRejected, WorkerCrashed, GraphDescriptionError) as err:
            self.reason = f"compiled chunked it failed: {str(err).strip().splitlines()[-1][:200] if str(err).strip() else type(err).__name__}"
            self.rows = None
            return None
        if self.compiles:
            stats.count("recompiles")
        else:
            stats.count("shape_generic_graphs")
        self.compiles += 1
        plans.append((size, run))
        plans.sort(key=lambda p: p[0])
        return run

    def _compile_chunked(self, args: list, binding: dict, extent: int) -> Callable:
        rows = self.rows
        scales = {}
        for node, dyns in rows.dyn.items():
            values = []
            for dyn in dyns:
                if dyn is None:
                    values.append(None)
                    continue
                scale = dyn[1].subs(binding)
                if not (scale.is_Integer and int(scale) > 0):
                    raise NotGeneric(f"{node.name} holds the size times {dyn[1]} = {scale}, not a whole number")
                values.append((dyn[0], int(scale)) if sympy.simplify(rows.outer[node] - 1) == 0 else ("merged",))
            scales[node.name] = values[0] if len(values) == 1 else ("merged",) if any(values) else None
        placeholders = [n for n in self.gm.graph.nodes if n.op == "placeholder"]
        examples = []
        size_source = None
        for k, (node, arg) in enumerate(zip(placeholders, args)):
            dyn = scales.get(node.name)
            if isinstance(arg, torch.Tensor) and dyn is not None:
                examples.append(arg.narrow(dyn[0], 0, extent * dyn[1]))
                size_source = size_source or (k, dyn[0], dyn[1])
            else:
                examples.append(arg)
        if size_source is None:
            raise NotGeneric("no tensor input holds the dynamic size")
        accumulating = None
        gm = self.gm
        if rows.partial or rows.size_values:
            accumulating = _Accumulating(self.gm, rows, binding, extent)
            gm = accumulating.gm
            examples += [torch.zeros(shape, dtype=dtype, device=device) for shape, dtype, device in accumulating.accumulators]
        static = _specialize(gm, binding, self.symbolic_outputs)
        chunk = {"extent": extent, "size": size_source, "dims": scales}
        if accumulating is None:
            return GraphExecutable(static, examples, chunk=chunk).boxed()
        chunk["params"] = SIZE_PARAMS
        run = GraphExecutable(static, examples, chunk=chunk).boxed()
        accumulators = accumulating.accumulators

        def accumulate(args: list) -> list:
            return run(list(args) + [torch.zeros(shape, dtype=dtype, device=device) for shape, dtype, device in accumulators])
        accumulate._boxed_call = True
        return accumulate


def compile_dynamic(gm: torch.fx.GraphModule, examples: Sequence[Any], compile_static: Callable) -> Callable | None:
    """A DynamicGraph for an AOT graph with symbolic shapes, None when its shapes are all static."""
    symbolic = any(isinstance(e, (torch.SymInt, torch.SymFloat)) or isinstance(e, torch.Tensor) and
                   any(isinstance(s, torch.SymInt) for s in e.shape) for e in examples)
    return DynamicGraph(gm, examples, compile_static) if symbolic else None


__all__ = ["SIZE_PARAMS", "DynamicGraph", "NotGeneric", "compile_dynamic"]
