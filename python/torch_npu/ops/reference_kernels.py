"""Register each custom op's reference (npu_mlir.frontend.references) as its CPU and fake kernel.

The CPU kernel is what the CPU fallback runs when the compiler rejects a call of a custom op (the
fallback redispatches to CPU on zero-copy aliases); it also lets the ops run on CPU tensors. The
fake kernel gives shapes on meta and fake tensors (torch.compile, FakeTensorMode) without a device.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import torch

from npu_mlir.frontend import references

_library = torch.library.Library(references.NAMESPACE, "IMPL")


def _schema_order(op: torch._ops.OpOverload, reference: Callable) -> Callable:
    """`reference` (positional, schema order) called the way the dispatcher calls a Python kernel."""
    arguments = op._schema.arguments

    def kernel(*args: Any, **kwargs: Any) -> Any:
        rest = [kwargs[a.name] if a.name in kwargs else a.default_value for a in arguments[len(args):]]
        return reference(*args, *rest)

    kernel.__name__ = kernel.__qualname__ = reference.__name__
    return kernel


def _overload(name: str) -> torch._ops.OpOverload | None:
    base, _, overload = name.partition(".")
    packet = getattr(getattr(torch.ops, references.NAMESPACE), base, None)
    return getattr(packet, overload or "default", None) if packet is not None else None


def register_all() -> None:
    """Register every reference whose op the build defined (torch_npu._C must be loaded)."""
    for name, reference in references.references().items():
        op = _overload(name)
        if op is None:
            # A stale build must not stop `import torch_npu`: only this op is missing.
            warnings.warn(f"npu_mlir.frontend.references has a reference for {references.NAMESPACE}::{name}, but "
                          "the build defines no such op: add its schema under custom: in npu_native_functions.yaml and rebuild "
                          "(make build)", stacklevel=2)
            continue
        kernel = _schema_order(op, reference)
        _library.impl(name, kernel, "CPU")
        torch.library.register_fake(op, kernel, lib=_library)
