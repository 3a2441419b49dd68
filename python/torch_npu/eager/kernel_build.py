"""Build one planned eager call into a kernel: runs inside a compile worker (no torch_npu import).

A request (made by torch_npu.eager.plan) names the functional aten op to trace and a template of
its arguments whose leaves are tagged tuples:
    ("tensor", k)        k-th tensor input (described in request["tensors"] as dtype, shape, strides)
    ("param", j)         j-th scalar parameter: a 0-d float64/int64 tensor, a kernel argument
    ("param_f32", j)     the same, narrowed to float32 first (for float16/bfloat16 ops)
    ("scaled", leaf, p)  leaf * parameter leaf p (how `alpha` becomes a parameter)
    ("list", [leaves])   a tensor list
    ("formatted", leaf, fmt, shape)  the logical tensor of `shape` whose internal-format storage is leaf
    ("value", v)         a constant
The same `materialize` runs on meta tensors in the user's process (to check that parameters keep
the op's result dtypes) and on example tensors here (to trace it).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Sequence

import torch

if __package__:
    from torch_npu.eager.custom_ops import reference as custom_reference
    from torch_npu.eager.formats import to_logical
    from torch_npu.eager.retrace import RETRACED
else:  # a compile worker imports this file as a top-level module, next to retrace.py
    from custom_ops import reference as custom_reference
    from formats import to_logical
    from retrace import RETRACED

PARAM_DTYPES = {"f64": torch.float64, "i64": torch.int64}


def resolve_op(qualified: str) -> torch._ops.OpOverload:
    """'aten::add.Tensor' -> torch.ops.aten.add.Tensor."""
    namespace, name = qualified.split("::")
    base, _, overload = name.partition(".")
    return getattr(getattr(getattr(torch.ops, namespace), base), overload or "default")


def _leaf(template: Any, tensors: Sequence[torch.Tensor], params: Sequence[torch.Tensor]) -> Any:
    tag = template[0]
    if tag == "tensor":
        return tensors[template[1]]
    if tag == "param":
        return params[template[1]]
    if tag == "param_f32":
        # float64 -> half does not lower in the sim target; torch computes half ops in float32 anyway.
        return params[template[1]].to(torch.float32)
    if tag == "scaled":
        return torch.ops.aten.mul.Tensor(_leaf(template[1], tensors, params), _leaf(template[2], tensors, params))
    if tag == "formatted":
        return to_logical(_leaf(template[1], tensors, params), template[2], template[3])
    if tag == "list":
        return [_leaf(t, tensors, params) if t is not None else None for t in template[1]]
    return template[1]


def materialize(request: dict, tensors: Sequence[torch.Tensor], params: Sequence[torch.Tensor]) -> Any:
    """Call the request's op on these tensors and parameters."""
    reference = custom_reference(request["target"])
    if reference is not None:
        # torch_npu's own ops are not registered in a compile worker: their reference is the op.
        return reference(*(_leaf(template, tensors, params) for template in request["args"]))
    op = resolve_op(request["target"])
    args, kwargs = [], {}
    for schema_arg, template in zip(op._schema.arguments, request["args"]):
        value = _leaf(template, tensors, params)
        if schema_arg.kwarg_only:
            kwargs[schema_arg.name] = value
        else:
            args.append(value)
    return RETRACED.get(op, op)(*args, **kwargs)


def example_tensors(request: dict, device: str = "cpu") -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    tensors = [torch.empty_strided(shape, strides, dtype=dtype, device=device) for dtype, shape, strides
               in request["tensors"]]
    if device == "cpu":
        for t in tensors:
            t.fill_(1)
    params = [torch.ones((), dtype=PARAM_DTYPES[p], device=device) for p in request["params"]]
    return tensors, params


def build(request: dict) -> dict:
    """Trace, lower and build the request; the kernel's metadata (see torch_npu.eager.miss)."""
    from npu_mlir.frontend.torch_import import import_fx_graph
    from npu_mlir.targets.ascend.sim import SimTiling, compile_linalg

    start = time.perf_counter()
    tensors, params = example_tensors(request)
    n_tensors, n_params = len(tensors), len(params)

    def call(*xs: torch.Tensor) -> Any:
        return materialize(request, xs[:n_tensors], xs[n_tensors:])

    graph = import_fx_graph(call, tensors + params)
    strides = [tuple(s) for _, _, s in request["tensors"]] + [None] * n_params
    kernel = compile_linalg(graph.module, SimTiling(request["block_dim"]), name=request["name"],
                            scalar_inputs=range(n_tensors, n_tensors + n_params), input_strides=strides,
                            cache_dir=Path(request["cache_dir"]))
    if len(kernel.inputs) != n_tensors or len(kernel.scalars) != n_params:
        raise ValueError(f"the kernel takes {len(kernel.inputs)} tensors and {len(kernel.scalars)} scalars, the "
                         f"call has {n_tensors} and {n_params}")
    return {"so_path": kernel.so_path, "symbol": kernel.symbol, "block_dim": kernel.block_dim,
            "outputs": [(list(s.shape), s.dtype) for s in kernel.outputs],
            "compile_ms": (time.perf_counter() - start) * 1e3}
