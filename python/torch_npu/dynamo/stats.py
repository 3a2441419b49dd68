"""The npu-mlir backend's counters: what `torch.npu.compile_stats()` reports."""

from __future__ import annotations

import copy
import threading
from typing import Any

_lock = threading.Lock()
_stats: dict[str, Any] = {}
_copied_at_reset = 0  # the C++ count of copied graph inputs when the counters were last zeroed


def _copied_inputs() -> int:
    from torch_npu import _C

    return _C._compiled_graph_inputs_copied()


def reset_compile_stats() -> None:
    """Zero every counter and forget the split nodes."""
    global _copied_at_reset
    with _lock:
        _copied_at_reset = _copied_inputs()
        _stats.clear()
        _stats.update(forward_graphs=0, backward_graphs=0, inference_graphs=0, graphs_compiled=0, cache_hits=0, cache_misses=0, compile_ms=0.0, recompiles=0, kernels=0, arena_bytes=0, temp_bytes=0,
                      mutations_aliased=0, mutations_copied=0, host_copies=0, graphs_captured=0, shape_generic_graphs=0,
                      kernel_kinds={}, split_nodes={}, per_shape={})


reset_compile_stats()


def count(name: str, amount: float = 1) -> None:
    with _lock:
        _stats[name] += amount


def count_kernel(kind: str) -> None:
    with _lock:
        _stats["kernel_kinds"][kind] = _stats["kernel_kinds"].get(kind, 0) + 1


def note_split(op: str, reason: str) -> bool:
    """Count one node of `op` that runs as an eager npu op; True the first time `op` is seen."""
    with _lock:
        row = _stats["split_nodes"].setdefault(op, {"count": 0, "reason": reason})
        row["count"] += 1
        return row["count"] == 1


def note_per_shape(reason: str) -> None:
    """Count one graph of symbolic shapes that compiles per concrete shape, and why."""
    with _lock:
        _stats["per_shape"][reason] = _stats["per_shape"].get(reason, 0) + 1


def compile_stats() -> dict[str, Any]:
    """A snapshot of the npu-mlir torch.compile backend's counters.

    graphs_compiled: AOT graphs (or their compiled pieces) turned into executables; cache_hits /
    cache_misses: of those, loaded from the kernel cache / built by a compile worker; compile_ms: time in
    the compile workers; recompiles: Dynamo frames compiled again (a new shape or a failed guard),
    and graphs of symbolic shapes (dynamic=True, mark_dynamic) compiled again for a new size;
    shape_generic_graphs: graphs of symbolic shapes compiled once for any size of one dynamic dim
    (dynamo/dynamic.py); per_shape: per reason, the graphs of symbolic shapes compiled once per
    concrete shape instead;
    kernels: kernel launches across the executables; kernel_kinds: those kernels per ascend-fuse group kind
    (matmul_epilogue and conv run on the cube; elementwise, reduction, single, opaque on the vector unit); arena_bytes / temp_bytes: the bytes of one call's
    intermediates across the executables, as planned (one arena each, intermediates whose lives do not
    overlap sharing bytes, 512-byte aligned) / one buffer each; mutations_aliased / mutations_copied: input
    mutations written straight into the input's buffer / copied into it after the run (a later kernel
    still read the input); inputs_copied: graph inputs copied by a call because their strides were not
    the traced ones (the kernels are built for the traced strides; a dim of one element's stride is
    never compared); host_copies: npu values a graph copies to the host (a CPU parameter's gradient), run
    as eager copies between pieces (a host tensor moved to npu is uploaded by the call, a host constant
    once at compile time: dynamo/constants.py); graphs_captured: npugraphs executables captured into an NPUGraph; split_nodes: per aten op, the nodes that run as
    eager npu ops instead (count, and the compiler's reason).
    """
    with _lock:
        return {**copy.deepcopy(_stats), "inputs_copied": _copied_inputs() - _copied_at_reset}
