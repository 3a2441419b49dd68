"""Compiles ahead of autograd: the kernels of a call's backward, built while the forward runs.

The eager dispatcher's misses come one at a time (each op waits for its kernel), so a model's first
step compiles serially on one worker while the pool's others idle. A forward call autograd records
(grad mode on, an input requiring grad) says which calls its backward will make: the same call on
meta tensors, differentiated by autograd under a recording dispatch mode, makes them with the same
shapes and strides. One background thread traces, another compiles the traced calls' plans on a pool
worker of its own (only with a worker and a core to spare); when the backward's miss asks for a request
already compiled or compiling, it takes (or waits for) that result instead of starting again.
Each op is traced with a contiguous incoming gradient: where autograd hands it another layout (sum's
backward expands), the call differs and compiles as a miss of its own. A request nobody asks for
costs only its compile, on a worker the misses were not using.
"""

from __future__ import annotations

import collections
import json
import os
import threading
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

# Speculated results kept for a backward that has not asked yet; the oldest go first.
MAX_KEPT = 512


def request_key(request: dict) -> str:
    # Lists and tuples alike: the dispatcher's descriptions and traced ones differ only there.
    return json.dumps(request, sort_keys=True, default=str)


@dataclass
class _Job:
    request: dict
    started: bool = False
    done: threading.Event = field(default_factory=threading.Event)
    result: dict | None = None
    error: BaseException | None = None


_lock = threading.Lock()
_jobs: collections.OrderedDict[str, _Job] = collections.OrderedDict()
_built: set[str] = set()  # requests this process compiled itself: not speculated again
_traces: collections.deque = collections.deque()  # (op name, args, grad args) waiting to be traced
_wake = threading.Condition(_lock)
_threads: list[threading.Thread] = []
# compiled: speculated requests built; taken: misses served by one (read by tests and benches).
counts = {"compiled": 0, "taken": 0}


class _Recorder(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[torch._ops.OpOverload, tuple, dict]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls.append((func, args, kwargs or {}))
        return func(*args, **(kwargs or {}))


def _meta(desc: Any, grad: bool) -> Any:
    from torch_npu.eager.plan import DTYPE_NAMES

    if isinstance(desc, list):
        return [_meta(d, False) for d in desc]
    if not isinstance(desc, tuple) or not desc or desc[0] not in ("T", "S"):
        return desc
    if desc[0] == "S":
        _, dtype, wrapped, value = desc
        if not wrapped:
            raise ValueError("a CPU tensor argument")
        return value
    _, dtype, shape, strides, _ = desc
    t = torch.empty_strided(shape, strides, dtype=DTYPE_NAMES[dtype], device="meta")
    return t.requires_grad_() if grad and t.is_floating_point() else t


def _describe(value: Any) -> Any:
    """A traced call's argument as the dispatcher describes it (CompileMiss.cpp describeArgs)."""
    from torch_npu.eager.plan import DTYPE_NAMES, SCALAR_TYPES

    names = {v: k for k, v in DTYPE_NAMES.items()}
    if isinstance(value, torch.Tensor):
        if value.dtype not in names:
            raise ValueError(f"dtype {value.dtype}")
        return ("T", names[value.dtype], list(value.shape), list(value.stride()), 2)
    if isinstance(value, (list, tuple)):
        return [_describe(v) for v in value]
    if isinstance(value, torch.dtype):
        return SCALAR_TYPES.index(value)
    if isinstance(value, (torch.device, torch.layout, torch.memory_format)):
        raise ValueError("a factory or layout argument")
    return value


def backward_calls(op_name: str, args: list, grad_args: list[int]) -> list[tuple[str, list]]:
    """(op name, described args) of each call the backward of this forward call makes."""
    from npu_mlir.frontend.kernel_build import resolve_op

    op = resolve_op(op_name)
    inputs = [_meta(d, i in grad_args) for i, d in enumerate(args)]
    schema_args = [a for a in op._schema.arguments if not a.is_out]
    positional = [v for a, v in zip(schema_args, inputs) if not a.kwarg_only]
    keywords = {a.name: v for a, v in zip(schema_args, inputs) if a.kwarg_only}
    with torch.enable_grad():
        out = op(*positional, **keywords)
    outs = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor) and t.grad_fn is not None]
    leaves = [t for t in tree_flatten(inputs)[0] if isinstance(t, torch.Tensor) and t.requires_grad]
    if not outs or not leaves:
        return []
    recorder = _Recorder()
    with recorder:
        torch.autograd.grad(outs, leaves, [torch.empty(t.shape, dtype=t.dtype, device="meta") for t in outs],
                            allow_unused=True)
    calls = []
    for func, call_args, kwargs in recorder.calls:
        schema = func._schema
        # Views and aliases are native npu kernels (no compile); factories take a device.
        if any(r.alias_info is not None for r in schema.returns) or func is torch.ops.aten.empty_like.default:
            continue
        described = []
        try:
            for i, a in enumerate(schema.arguments):
                if a.is_out:
                    continue
                if i < len(call_args):
                    value = call_args[i]
                elif a.name in kwargs:
                    value = kwargs[a.name]
                elif a.has_default_value():
                    value = a.default_value
                else:
                    raise ValueError(f"no value for {a.name}")
                described.append(_describe(value))
        except ValueError:
            continue
        calls.append((f"{schema.name}.{func._overloadname}" if func._overloadname != "default" else schema.name,
                      described))
    return calls


def speculate(op_name: str, args: list, grad_args: list[int]) -> None:
    """Queue the backward of this forward call for compiling ahead (traced on the background thread).
    Only with a worker and a core to spare: with one worker a speculated compile delays the real
    misses, and on a busy host the second worker's boot and compiles take the CPU they would have
    had (forced on at load 19 on 2 cores, a transformer's first step took 68 s instead of 55 s)."""
    from torch_npu.eager.workers import pool

    if pool().size < 2 or os.getloadavg()[0] >= (os.cpu_count() or 1):
        return
    with _lock:
        _traces.append((op_name, args, list(grad_args)))
        if not _threads:
            # One traces while the other waits on a worker: a compile must not hold back the next trace.
            for loop in (_trace_loop, _compile_loop):
                _threads.append(threading.Thread(target=loop, name=f"torch_npu-speculation{loop.__name__}", daemon=True))
                _threads[-1].start()
        _wake.notify_all()


def note_built(request: dict) -> None:
    with _lock:
        _built.add(request_key(request))


def take(request: dict) -> dict | None:
    """The speculated result of `request` (waiting while it compiles); None if it was not speculated or
    has not started (the caller compiles it now). A refusal or a worker crash raises as the caller's
    own compile would have (the request is the same: it would refuse or crash again)."""
    from torch_npu.eager.workers import CompileRejected, WorkerCrashed

    key = request_key(request)
    with _lock:
        job = _jobs.get(key)
        if job is None:
            return None
        if not job.started:
            del _jobs[key]
            return None
    job.done.wait()
    with _lock:
        _jobs.pop(key, None)
        counts["taken"] += job.error is None
    if isinstance(job.error, (CompileRejected, WorkerCrashed)):
        raise job.error
    return job.result


def _plan_jobs(op_name: str, args: list, grad_args: list[int], cache_dir: str, block_dim: int) -> None:
    from torch_npu.eager.plan import plan_call

    for name, described in backward_calls(op_name, args, grad_args):
        try:
            plan = plan_call(name, described, block_dim)
        except Exception:  # the backward's own miss will say why, if it comes
            continue
        if plan.empty_outputs is not None:
            continue
        request = dict(plan.request, cache_dir=cache_dir)
        key = request_key(request)
        with _lock:
            if key in _jobs or key in _built:
                continue
            _jobs[key] = _Job(request)
            while len(_jobs) > MAX_KEPT:
                _jobs.popitem(last=False)
            _wake.notify_all()


def _trace_loop() -> None:
    from torch_npu.eager import disk_cache
    from torch_npu.eager.miss import BLOCK_DIM

    while True:
        with _lock:
            while not _traces:
                _wake.wait()
            trace = _traces.popleft()
        try:
            _plan_jobs(*trace, str(disk_cache.version_dir()), BLOCK_DIM)
        except Exception:  # an op meta tensors or autograd cannot run: nothing to speculate
            pass
        with _lock:
            _wake.notify_all()


def _compile_loop() -> None:
    from torch_npu.eager.workers import pool

    while True:
        with _lock:
            while (job := next((j for j in _jobs.values() if not j.started), None)) is None:
                _wake.wait()
            job.started = True
        try:
            job.result = pool().compile(job.request)
            counts["compiled"] += 1
        except BaseException as err:  # kept for take()
            job.error = err
        job.done.set()
