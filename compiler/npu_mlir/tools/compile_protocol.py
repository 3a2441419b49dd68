"""What crosses between the user's process, its compile workers, its disk cache and the C++ dispatcher.

The user's process asks a worker for a `CompileRequest` (an eager call or a torch.compile graph,
stamped with PROTOCOL_VERSION; a worker of another version refuses it as stale rather than building
what it might misread). A compile worker (compile_worker.py) answers a request with a `KernelRecord`: the launch list of
one eager call or one torch.compile graph (so_path / symbol / block_dim / buffer refs per launch,
the temporaries' bytes, each result's sizes and MLIR element type) and each kernel's sources. The
user's process keeps it on disk (torch_npu.eager.disk_cache, as JSON stamped with
PROTOCOL_VERSION), and the eager miss path hands the dispatcher an `EagerAnswer` (the record with
the call's `Dispatch` plan), a `PendingAnswer` while a worker builds it, or an `Unsupported` refusal; csrc/eager/CompileMiss.cpp and
csrc/npu/CompileBindings.cpp read these fields by name. A record the compiler refused is a
`Rejected`.

`from_json` raises StaleRecord for a record of another PROTOCOL_VERSION or one that does not have
these fields: the disk cache deletes it and the call compiles again, never misreading it. Bump
PROTOCOL_VERSION whenever a field changes meaning. Plain dataclasses and json: the user's process
reads this without loading MLIR.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Union

PROTOCOL_VERSION = 1
REQUEST_KINDS = ("op", "graph")
REF_KINDS = ("in", "out", "tmp", "param")  # csrc/eager/KernelCache.h LaunchArg::Kind, in this order

Ref = tuple[str, int]  # (one of REF_KINDS, index): a launch's buffer, see npu_mlir.targets.launch_list


class StaleRecord(ValueError):
    """A stored record written by another version of this protocol, or damaged."""


@dataclass(frozen=True)
class CompileRequest:
    """One build for a compile worker. `kind` "op": one eager call, `spec` its plan's request
    (torch_npu.eager.plan: target, args, tensors, params, ...), built by frontend/kernel_build.py;
    "graph": one torch.compile graph, `spec` its description and name (torch_npu.dynamo), built by
    frontend/fx_graph.py. `cache_dir`: the disk cache's version directory the libraries go to."""

    kind: str
    spec: dict[str, Any]
    cache_dir: str
    protocol: int = PROTOCOL_VERSION

    def __post_init__(self) -> None:
        if self.kind not in REQUEST_KINDS:
            raise ValueError(f"a compile request of kind {self.kind!r}; the kinds are {REQUEST_KINDS}")

    def builder_input(self) -> dict[str, Any]:
        """The dict the kind's builder reads (its spec and cache_dir), a copy: the request stays as sent."""
        return dict(self.spec, cache_dir=self.cache_dir)


@dataclass(frozen=True)
class Launch:
    so_path: str
    symbol: str
    block_dim: int
    refs: tuple[Ref, ...]


@dataclass(frozen=True)
class KernelSources:
    """One kernel's other forms (launch_list.Launch): tiled MLIR, AscendC and its ACL launcher."""

    kernel: str
    symbol: str
    tiled_mlir: str
    ascendc: str | None
    acl: str | None
    ascendc_error: str = ""


@dataclass(frozen=True)
class KernelRecord:
    """A compiled call or graph: its launches, run in order on the stream."""

    launches: tuple[Launch, ...]
    temps: tuple[int, ...]  # bytes of each ("tmp", t) buffer
    outputs: tuple[tuple[tuple[int, ...], str], ...]  # (sizes, MLIR element type) of each ("out", j)
    path: str = "pipeline"  # "pipeline", "linalg" (bench_pipeline's peer), "empty" (nothing to run)
    reason: str = ""  # why a "linalg" record did not take the pipeline
    sources: tuple[KernelSources, ...] = ()
    acl: str | None = None  # the ACL host runner of the whole list
    compile_ms: float = 0.0


@dataclass(frozen=True)
class Rejected:
    """The compiler refused the call (kept on disk, so a later process does not ask again)."""

    reason: str


@dataclass(frozen=True)
class Dispatch:
    """How the dispatcher feeds an eager call's record and places its results (torch_npu.eager.plan)."""

    inputs: tuple[tuple[int, int], ...]  # (argument, list element or -1) per ("in", k)
    params: tuple[tuple[int, bool], ...]  # (argument, is float) per ("param", j)
    baked: tuple[int, ...]  # arguments whose values the kernel was built for
    targets: tuple[tuple[int, int, bool], ...]  # per result: (argument or -1 for fresh, element, resizable)
    returns: tuple[tuple[int, tuple[int, ...], bool], ...]  # per op return: (argument or -1, results, is a list)
    layouts: tuple[tuple[tuple[int, ...], tuple[int, ...]] | None, ...]  # per result: (sizes, strides) or None


@dataclass(frozen=True)
class EagerAnswer:
    """A kernel for an eager call: what CompileMiss.cpp turns into its cache record."""

    record: KernelRecord
    dispatch: Dispatch


@dataclass(frozen=True)
class PendingAnswer:
    """An eager call whose kernel a compile worker builds in the background: the Dispatch plan and each
    result's (sizes, MLIR element type) off the meta tensors, from which the dispatcher allocates the
    results and queues the call (csrc/eager/CompileMiss.h). The build's EagerAnswer or Unsupported
    follows through the callback the dispatcher passed."""

    dispatch: Dispatch
    outputs: tuple[tuple[tuple[int, ...], str], ...]


@dataclass(frozen=True)
class Unsupported:
    """The call runs on the CPU fallback, and its key is remembered as unsupported (on disk too, unless
    the worker crashed)."""

    reason: str
    crashed: bool = False
    baked: tuple[int, ...] = field(default=())  # the refusal holds for calls with these argument values


Stored = Union[KernelRecord, Rejected]


def record_from_build(built: dict[str, Any]) -> KernelRecord:
    """The record of a builder's answer (frontend.kernel_build / fx_graph: a launch-list dict)."""
    return KernelRecord(
        launches=tuple(Launch(str(l["so_path"]), l["symbol"], int(l["block_dim"]),
                              tuple((kind, int(i)) for kind, i in l["refs"])) for l in built.get("launches", [])),
        temps=tuple(int(t) for t in built.get("temps", [])),
        outputs=tuple((tuple(int(s) for s in sizes), dtype) for sizes, dtype in built["outputs"]),
        path=built.get("path", "pipeline"), reason=built.get("reason", ""),
        sources=tuple(KernelSources(**s) for s in built.get("sources", [])), acl=built.get("acl"),
        compile_ms=float(built.get("compile_ms", 0.0)))


def to_json(stored: Stored) -> dict[str, Any]:
    """The JSON form of a stored record, stamped with PROTOCOL_VERSION."""
    if isinstance(stored, Rejected):
        return {"protocol": PROTOCOL_VERSION, "launches": [], "rejected": stored.reason}
    return dict(asdict(stored), protocol=PROTOCOL_VERSION)


def _tuples(value: Any) -> Any:
    """JSON lists (and a plan's lists inside tuples) as the tuples the records hold."""
    return tuple(_tuples(v) for v in value) if isinstance(value, (list, tuple)) else value


def from_json(data: dict[str, Any]) -> Stored:
    """The record `to_json` wrote; raises StaleRecord for another protocol version or missing fields."""
    if not isinstance(data, dict) or data.get("protocol") != PROTOCOL_VERSION:
        raise StaleRecord(f"record of protocol {data.get('protocol') if isinstance(data, dict) else None}, "
                          f"this compiler reads {PROTOCOL_VERSION}")
    try:
        if "rejected" in data:
            return Rejected(str(data["rejected"]))
        return KernelRecord(
            launches=tuple(Launch(l["so_path"], l["symbol"], int(l["block_dim"]), _tuples(l["refs"]))
                           for l in data["launches"]),
            temps=_tuples(data["temps"]), outputs=_tuples(data["outputs"]), path=data["path"],
            reason=data["reason"], sources=tuple(KernelSources(**s) for s in data["sources"]), acl=data["acl"],
            compile_ms=float(data["compile_ms"]))
    except (KeyError, TypeError, ValueError) as err:
        raise StaleRecord(f"record without the fields of protocol {PROTOCOL_VERSION}: {err}") from None


def dispatch_to_json(dispatch: Dispatch) -> dict[str, Any]:
    return asdict(dispatch)


def dispatch_from_json(data: dict[str, Any]) -> Dispatch:
    try:
        return Dispatch(**{name: _tuples(data[name]) for name in Dispatch.__dataclass_fields__})
    except (KeyError, TypeError) as err:
        raise StaleRecord(f"dispatch plan without the fields of protocol {PROTOCOL_VERSION}: {err}") from None


__all__ = ["PROTOCOL_VERSION", "REF_KINDS", "REQUEST_KINDS", "CompileRequest", "Dispatch", "EagerAnswer", "KernelRecord", "KernelSources", "Launch",
           "PendingAnswer", "Ref", "Rejected", "StaleRecord", "Stored", "Unsupported", "dispatch_from_json", "dispatch_to_json",
           "from_json", "record_from_build", "to_json"]
