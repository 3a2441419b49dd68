"""Decompositions of the _foreach_* ops (an optimizer step's SGD / Adam with foreach=True) into one
aten op per list element, so the whole step compiles into fused npu-mlir kernels.

torch ships no decomposition for them and core ATen keeps them whole, which the compiler cannot lower.
`_foreach_<name>.<overload>(lists..., scalars...)` becomes `aten.<name>(element i of each list, the
i-th entry of each scalar list, every other argument as is)` for each i; the overload of aten.<name>
is picked from the element arguments, as a Python call would. Overloads taking a tensor of per-list
scalars (`_foreach_addcdiv.Tensor`, ...) are left out: one entry of it is data, not an argument.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

aten = torch.ops.aten


def _per_element(overload: torch._ops.OpOverload) -> Callable | None:
    schema = overload._schema
    if overload._overloadname.endswith("out") or schema.is_mutable:
        return None
    name = schema.name.removeprefix("aten::_foreach_")
    if not hasattr(aten, name) or [str(r.type) for r in schema.returns] != ["List[Tensor]"]:
        return None
    kinds = [str(a.type) for a in schema.arguments]
    if any(k == "Tensor" and a.name == "scalars" for k, a in zip(kinds, schema.arguments)):
        return None
    listed = [k.startswith("List[") for k in kinds]
    # _foreach_norm's (ord, dtype) are linalg_vector_norm's, not aten.norm's (whose overloads take no dtype=None).
    target = (lambda t, ord=2, dtype=None: aten.linalg_vector_norm(t, ord, dtype=dtype)) if name == "norm" \
        else getattr(aten, name)

    # A positional argument of the foreach op that aten.<name> takes by keyword only (addcmul's value).
    keyword_only = {a.name for o in (target.overloads() if name != "norm" else [])
                    for a in getattr(target, o)._schema.arguments if a.kwarg_only}
    names = [a.name for a in schema.arguments]

    def decomposed(*args: Any, **kwargs: Any) -> list[torch.Tensor]:
        length = next(len(a) for a, is_list in zip(args, listed) if is_list)
        results = []
        for i in range(length):
            elements = [a[i] if is_list else a for a, is_list in zip(args, listed)]
            positional = [e for e, n in zip(elements, names) if n not in keyword_only]
            by_name = {n: e for e, n in zip(elements, names) if n in keyword_only}
            results.append(target(*positional, **by_name, **kwargs))
        return results

    return decomposed


def foreach_decompositions() -> dict[torch._ops.OpOverload, Callable]:
    """{_foreach_* overload: its per-element decomposition} for every out-of-place overload it covers."""
    table = {}
    names = {s.name.removeprefix("aten::") for s in torch._C._jit_get_all_schemas() if s.name.startswith("aten::_foreach_")}
    for name in sorted(names):
        if name.endswith("_"):
            continue
        packet = getattr(aten, name)
        for overload_name in packet.overloads():
            overload = getattr(packet, overload_name)
            decomposed = _per_element(overload)
            if decomposed is not None:
                table[overload] = decomposed
    return table
