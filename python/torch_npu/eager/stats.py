"""Counters of the eager path: how each op's calls ran, and what compiling cost."""

from __future__ import annotations

import torch_npu._C as _C

__all__ = ["eager_stats", "reset_eager_stats"]


def eager_stats() -> dict[str, dict[str, float]]:
    """Return per-op counters since the last reset, e.g. ``{"aten::add.Tensor": {...}}``.

    Each op's dict holds ``hits`` / ``misses`` (kernel cache lookups), ``compile_ms`` (time spent in
    misses, including disk-cache loads), and calls by path: ``compiled`` (ran an npu_mlir kernel),
    ``fallback`` (ran on the CPU, from any cause; counted by the CPU fallback itself). A compiled op
    whose last fallback call the compiler refused also holds ``fallback_reason``, the compiler's
    message. Ops that only took the fallback appear too; ``view`` counts the metadata-only views listed under ``views:`` in
    npu_native_functions.yaml. Returns at once; never synchronizes.
    """
    rows = {name: dict(row) for name, row in _C._eager_stats().items()}
    for name, calls in _C._fallback_counts().items():
        row = rows.setdefault(name, {"hits": 0, "misses": 0, "compiled": 0, "fallback": 0, "view": 0,
                                     "compile_ms": 0.0})
        row["fallback"] = calls
    return {name: row for name, row in rows.items() if row["hits"] or row["misses"] or row["fallback"] or row["view"]}


def reset_eager_stats() -> None:
    """Zero every counter (kernels stay cached). Returns at once."""
    _C._eager_reset_stats()
    _C._reset_fallback_counts()
