"""Import torch programs with torch-mlir's FxImporter and lower them to linalg on tensors.

The fast path of PLATFORM-NOTES: `make_fx` with the core-ATen decompositions torch-mlir expects
(~15 ms for one op), `FxImporter` into a per-thread reused Context (~1 ms; a new Context costs ~3 ms),
then torch-mlir's backend pipelines (~10 ms). `fx.export_and_import` would cost ~150 ms per op.

Scalar values that are not structural (the `2.5` of `x * 2.5`, the `alpha` of an add) become 0-d
float64/int64 function arguments, listed in `ImportedGraph.scalar_inputs`, so the compiled kernel
takes them as parameters and one compile serves every value. A scalar stays a constant when
passing it as a 0-d tensor would change the result dtype (an integer tensor times a float).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch.utils._pytree import tree_flatten, tree_unflatten
from torch_mlir import ir
from torch_mlir.dialects import torch as torch_d
from torch_mlir.extras.fx_decomp_util import get_decomposition_table
from torch_mlir.extras.fx_importer import FxImporter
from torch_mlir.passmanager import PassManager

from npu_mlir.frontend.decompositions.bounds import lower_in_range
from npu_mlir.frontend.comparison_scalars import comparison_scalars_in_tensor_kind

TO_LINALG = ("builtin.module(func.func(torch-match-quantized-custom-ops), "
             "torchdynamo-export-to-torch-backend-pipeline{extra-library=}, "
             "torch-backend-to-linalg-on-tensors-backend-pipeline)")


class FrontendError(RuntimeError):
    """torch-mlir could not import or lower the program (ERR03007: not supported)."""

    def __init__(self, message: str, code: str = "ERR03007") -> None:
        super().__init__(f"{code} GRAPH {message}")
        self.code = code


@dataclass
class ImportedGraph:
    """A linalg-on-tensors module with one public function `main`.

    `inputs[i]` is the index, among the flattened (args, kwargs) leaves given to the importer, of
    function argument i; `scalar_inputs` are the argument positions that are scalar parameters
    (0-d f64/i64) - pass them to `compile_linalg(..., scalar_inputs=...)`.
    """

    module: ir.Module
    inputs: tuple[int, ...]
    scalar_inputs: tuple[int, ...]


_tls = threading.local()


def _context() -> ir.Context:
    if not hasattr(_tls, "context"):
        _tls.context = ir.Context()
        torch_d.register_dialect(_tls.context)
    return _tls.context


def _to_linalg() -> PassManager:
    """TO_LINALG for this thread's context, built once: a pass manager run again keeps what its passes
    initialized (canonicalize's frozen patterns), a few ms of each import. Every dialect is loaded
    first, so those patterns cover dialects a later graph brings in."""
    if not hasattr(_tls, "to_linalg"):
        _context().load_all_available_dialects()
        _tls.to_linalg = PassManager.parse(TO_LINALG, _context())
    return _tls.to_linalg


def _decompositions() -> dict:
    if not hasattr(_tls, "decompositions"):
        _tls.decompositions = get_decomposition_table()
    return _tls.decompositions


def _lower(gm: torch.fx.GraphModule) -> ir.Module:
    lower_in_range(gm)
    comparison_scalars_in_tensor_kind(gm)
    importer = FxImporter(context=_context())
    try:
        importer.import_stateless_graph(gm.graph, func_name="main")
        with _context():
            _to_linalg().run(importer.module.operation)
    except Exception as err:  # torch-mlir raises plain Exceptions/RuntimeErrors with the diagnostic
        raise FrontendError(f"torch-mlir cannot lower this graph to linalg: {str(err).strip()[:2000]}") from err
    return importer.module


def _trace(fn: Callable, example: Sequence[torch.Tensor]) -> torch.fx.GraphModule:
    try:
        return make_fx(fn, decomposition_table=_decompositions())(*example)
    except Exception as err:
        raise FrontendError(f"tracing with make_fx failed: {err}") from err


def _as_parameter(value: Any, tensors: list[torch.Tensor]) -> torch.Tensor | None:
    """The 0-d tensor standing for a scalar value, or None when it must stay a constant."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not tensors:
        return None
    param = torch.tensor(value, dtype=torch.float64 if isinstance(value, float) else torch.int64)
    try:
        return param if torch.result_type(tensors[0], param) == torch.result_type(tensors[0], value) else None
    except (TypeError, RuntimeError):
        return None


def _tensor_overload(op: torch._ops.OpOverload, names: set[str]) -> torch._ops.OpOverload | None:
    """A sibling overload taking Tensors for the Scalar arguments `names` (add.Scalar -> add.Tensor,
    clamp -> clamp.Tensor, pow.Tensor_Scalar -> pow.Tensor_Tensor), all else identical."""
    base = {a.name: str(a.type) for a in op._schema.arguments}
    for overload in op.overloadpacket.overloads():
        candidate = getattr(op.overloadpacket, overload)
        args = {a.name: str(a.type) for a in candidate._schema.arguments}
        if args.keys() != base.keys() or len(candidate._schema.returns) != len(op._schema.returns):
            continue
        if all(args[k] in ("Tensor", "Optional[Tensor]") if k in names else args[k] == base[k] for k in base):
            return candidate
    return None


class _Slot:
    """Marks a top-level scalar argument while flattening, to find its leaf position."""


def import_aten_op(op: torch._ops.OpOverload, args: Sequence[Any], kwargs: dict | None = None) -> ImportedGraph:
    """One aten op with its example arguments -> linalg module; tensors and value scalars are inputs.

    A number passed where the schema takes a Tensor (`x * 0.5` reaches aten as mul.Tensor) becomes a
    parameter; numbers of Scalar-typed arguments do too when a sibling overload takes a Tensor there
    (mul.Scalar, clamp's min/max). Others (`alpha`, dims, flags) stay constants of the graph.
    """
    args, kwargs = list(args), dict(kwargs or {})
    schema = op._schema.arguments
    named = {a.name: a for a in schema}
    top = [(schema[p].name if p < len(schema) else None, v) for p, v in enumerate(args)] + list(kwargs.items())
    tensors = [v for v in tree_flatten((args, kwargs))[0] if isinstance(v, torch.Tensor)]
    wanted = {name: _as_parameter(v, tensors) for name, v in top if name in named}
    wanted = {k: v for k, v in wanted.items() if v is not None}
    scalar_typed = {k for k in wanted if str(named[k].type) not in ("Tensor", "Optional[Tensor]")}
    target = op
    if scalar_typed:
        target = _tensor_overload(op, scalar_typed) or op
        if target is op:
            wanted = {k: v for k, v in wanted.items() if k not in scalar_typed}

    marked_args = [_Slot() if p < len(schema) and schema[p].name in wanted else v for p, v in enumerate(args)]
    marked_kwargs = {k: _Slot() if k in wanted else v for k, v in kwargs.items()}
    leaves, spec = tree_flatten((marked_args, marked_kwargs))
    slot_names = [schema[p].name for p, v in enumerate(marked_args) if isinstance(v, _Slot)] + \
                 [k for k, v in marked_kwargs.items() if isinstance(v, _Slot)]
    example, positions, scalars = [], [], []
    slot_iter = iter(slot_names)
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, torch.Tensor):
            positions.append(i)
            example.append(leaf)
        elif isinstance(leaf, _Slot):
            positions.append(i)
            scalars.append(len(example))
            example.append(wanted[next(slot_iter)])

    def call(*values: torch.Tensor) -> Any:
        filled = list(leaves)
        for pos, t in zip(positions, values):
            filled[pos] = t
        call_args, call_kwargs = tree_unflatten(filled, spec)
        return target(*call_args, **call_kwargs)

    module = _lower(_trace(call, example))
    return ImportedGraph(module, tuple(positions), tuple(scalars))


def import_fx_graph(gm: torch.fx.GraphModule | Callable, example_inputs: Sequence[torch.Tensor]) -> ImportedGraph:
    """A graph (or any traceable callable) over tensors -> linalg module with static shapes."""
    module = _lower(_trace(gm, list(example_inputs)))
    return ImportedGraph(module, tuple(range(len(example_inputs))), ())
