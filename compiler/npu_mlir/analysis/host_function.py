"""What a host function may hold once kernels are outlined: launches and views, nothing that computes.

After `ascend-fuse` every computation belongs in an `ascend.kernel`; the host function (the one
that becomes an eager record's launch list, or a compiled graph's host plan) only sequences
`ascend.launch`es and reshapes their buffers. `host_compute` lists what breaks that rule, for the
`ascend-verify-host` pass and for the eager compile worker, which keeps an op on its linalg path
(and says why) while the pipeline cannot take it.
"""

from __future__ import annotations

from torch_mlir import ir

# Reshapes of contiguous buffers are views: no data moves, the launch list aliases the buffer.
VIEW_OPS = frozenset({"tensor.expand_shape", "tensor.collapse_shape"})
HOST_OPS = VIEW_OPS | {"ascend.launch", "func.return"}


def host_functions(module: ir.Operation) -> list[ir.Operation]:
    return [op.operation for op in module.regions[0].blocks[0].operations
            if op.operation.name == "func.func" and op.operation.regions[0].blocks]


def host_compute(func: ir.Operation) -> list[ir.Operation]:
    """The ops of `func` that compute on the host."""
    out = []
    for op in func.regions[0].blocks[0].operations:
        op = op.operation
        if op.name in HOST_OPS:
            continue
        # Constants and empties compute nothing themselves (whatever reads them does); a launch
        # list has no use for either, so they never survive in a host function that passes.
        if op.name in ("arith.constant", "tensor.empty"):
            continue
        out.append(op)
    return out


def describe(ops: list[ir.Operation]) -> str:
    """'linalg.generic x2, tensor.extract' — the kinds of host compute, most frequent first."""
    counts: dict[str, int] = {}
    for op in ops:
        counts[op.name] = counts.get(op.name, 0) + 1
    return ", ".join(f"{n} x{c}" if c > 1 else n for n, c in sorted(counts.items(), key=lambda kv: -kv[1]))
