"""The eager dispatcher's miss path: one call key in, a loadable kernel's metadata out.

The C++ dispatcher (csrc/eager) calls `compile_for_dispatch` under the GIL the first time it sees a
key. A call an earlier process compiled is answered from the disk cache alone: no planning, no
compile worker, no MLIR. Otherwise a compile worker is started (it boots while the call is
planned), the call is planned here (plan.py), built by a worker (workers.py) and stored with its plan.
The answer is an EagerAnswer (the record and the call's Dispatch plan, npu_mlir.tools.compile_protocol)
the dispatcher turns into its cache record, or Unsupported: the call runs on the CPU fallback, and the
key is remembered as unsupported for the rest of the process (and on disk, unless the worker crashed).

When the dispatcher passes `done` (the call can wait for its kernel on its stream, csrc/eager/CompileMiss.h),
the build does not hold up the host: the answer is a PendingAnswer (the plan and the results' meta
shapes), the build runs on a thread of this module's own, one per compile worker, and its EagerAnswer
or Unsupported goes to `done`. So the misses of one model compile on every worker at once while the
host plans the next ones.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from npu_mlir.tools.compile_protocol import CompileRequest, Dispatch, EagerAnswer, PendingAnswer, Rejected, \
    Unsupported, dispatch_from_json, record_from_build

from torch_npu.eager import disk_cache
from torch_npu.eager.workers import CompileRejected, WorkerCrashed, pool

# Blocks a kernel may be split into; the simulated AI-core pool has one thread per host core.
BLOCK_DIM = int(os.environ.get("TORCH_NPU_EAGER_BLOCK_DIM", str(min(8, os.cpu_count() or 1))))

Answer = EagerAnswer | Unsupported


def _dispatch(plan) -> Dispatch:
    """The plan's part of the answer: how the dispatcher feeds the kernel and places its results."""
    return dispatch_from_json({"inputs": plan.inputs, "params": plan.params, "baked": plan.baked,
                               "targets": plan.targets, "returns": plan.returns, "layouts": plan.layouts})


def disk_key(key: bytes) -> bytes:
    """The disk cache's key of a dispatcher key: a process with another TORCH_NPU_EAGER_BLOCK_DIM plans
    its own kernels (a stored record launches with the block_dim it was built for, so serving it
    elsewhere is correct but ignores the setting; the dispatcher's memory cache lives in one process)."""
    return key + b"|block_dim=%d" % BLOCK_DIM


def _plan(key: bytes, op_name: str, args: list):
    """The call's plan and the key of its disk entry (`key`: its disk key).

    Raises CompileRejected when the plan refuses the call (kept on disk)."""
    pool().start(1)  # a real miss: a worker imports the compiler while the call is planned
    from torch_npu.eager.plan import PlanError, number_value, plan_call  # plan_call imports torch._dynamo (~1.5 s)

    try:
        plan = plan_call(op_name, args, BLOCK_DIM)
    except PlanError as err:
        # The plan may refuse these numbers only (arange's step 0): the refusal is keyed by all of them.
        numbers = [i for i, desc in enumerate(args) if number_value(desc) is not None]
        if numbers:
            disk_cache.store_baked(key, numbers)
        disk_cache.store(disk_cache.call_key(key, numbers, args), Rejected(f"{op_name}: {err}"), eager=True)
        raise CompileRejected(err, numbers) from err
    if plan.baked:
        disk_cache.store_baked(key, plan.baked)
    return plan, disk_cache.call_key(key, plan.baked, args)


def _build(plan, entry_key: bytes, op_name: str) -> EagerAnswer:
    """The planned call's kernel from a compile worker, stored on disk with its plan.

    Raises CompileRejected (the compiler refuses the call; kept on disk) or WorkerCrashed."""
    if plan.empty_outputs is not None:
        # Nothing to compute: the dispatcher allocates the (empty) results and launches nothing.
        record = record_from_build({"path": "empty", "outputs": plan.empty_outputs})
    else:
        request = CompileRequest("op", plan.request, str(disk_cache.version_dir()))
        try:
            record = pool().compile(request)
        except CompileRejected as err:
            disk_cache.store(entry_key, Rejected(f"{op_name}: {err}"), eager=True)
            raise CompileRejected(err, plan.baked) from err
    dispatch = _dispatch(plan)
    disk_cache.store(entry_key, record, dispatch)
    return EagerAnswer(record, dispatch)


def _refusal(op_name: str, build: Callable[[], EagerAnswer]) -> Answer:
    """`build()`'s answer, a refusal or a worker crash as the Unsupported the dispatcher reads."""
    try:
        return build()
    except CompileRejected as err:
        return Unsupported(f"{op_name}: {err}", crashed=False, baked=tuple(err.baked))
    except WorkerCrashed as err:
        return Unsupported(f"the compile worker crashed or hung on {op_name} ({err}); this call runs on the CPU, "
                           "and the same call will not be compiled again in this process. ERR01005 OPS internal error",
                           crashed=True)


def compile_kernel(key: bytes, op_name: str, args: list) -> EagerAnswer:
    """The kernel for this call (`key`: its disk key) from a compile worker, waited for.

    Raises CompileRejected (the plan or the compiler refuses the call; kept on disk) or WorkerCrashed.
    """
    plan, entry_key = _plan(key, op_name, args)
    return _build(plan, entry_key, op_name)


def _meta_outputs(plan) -> tuple | None:
    """Each kernel result's (sizes, MLIR element type) off the meta tensors, as the worker's record
    will give them (the dispatcher checks it does); None when a dtype has no MLIR type."""
    from torch_npu.eager.plan import MLIR_TYPES, _flat, _results

    results = _flat(_results(plan.request))
    if any(dtype not in MLIR_TYPES for dtype, _ in results):
        return None
    return tuple((tuple(int(s) for s in shape), MLIR_TYPES[dtype]) for dtype, shape in results)


_builders: list[ThreadPoolExecutor] = []
_builders_lock = threading.Lock()


def _background() -> ThreadPoolExecutor:
    """The threads that wait for background builds: one per compile worker, so each keeps one busy."""
    with _builders_lock:
        if not _builders:
            _builders.append(ThreadPoolExecutor(pool().size, thread_name_prefix="torch_npu-miss"))
        return _builders[0]


def _finish(done: Callable[[Answer], None], plan, entry_key: bytes, op_name: str) -> None:
    try:
        answer = _refusal(op_name, lambda: _build(plan, entry_key, op_name))
    except Exception as err:  # a bug here must still release the calls waiting on their streams
        answer = Unsupported(f"the eager compile of {op_name} raised {type(err).__name__}: {err}. "
                             "ERR01005 OPS internal error", crashed=True)
    done(answer)


def compile_for_dispatch(key: bytes, op_name: str, args: list,
                         done: Callable[[Answer], None] | None = None) -> Answer | PendingAnswer:
    key = disk_key(key)
    answer = disk_cache.load_answer(key, args)
    if answer is not None:
        return answer
    try:
        plan, entry_key = _plan(key, op_name, args)
    except CompileRejected as err:
        return Unsupported(f"{op_name}: {err}", crashed=False, baked=tuple(err.baked))
    outputs = None if done is None or plan.empty_outputs is not None else _meta_outputs(plan)
    if outputs is None:
        return _refusal(op_name, lambda: _build(plan, entry_key, op_name))
    _background().submit(_finish, done, plan, entry_key, op_name)
    return PendingAnswer(_dispatch(plan), outputs)
