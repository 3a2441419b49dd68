"""The eager dispatcher's miss path: one call key in, a loadable kernel's metadata out.

The C++ dispatcher (csrc/eager) calls `compile_for_dispatch` under the GIL the first time it sees a
key. The call is planned here (plan.py), looked up in the disk cache, else built by a compile
worker (workers.py) and stored. The answer is a dict the dispatcher turns into its cache record:
    so_path, symbol, block_dim, inputs [(arg, element)], params [(arg, is_float)],
    outputs [(sizes, mlir dtype)], baked [arg],
    targets [(arg, element, resizable)] per output (arg -1: a fresh result; else the argument it writes),
    returns [(arg, [output], is_list)] per return of the op (arg -1: made of those outputs)
or {"unsupported": reason, "crashed": bool}: the call runs on the CPU fallback, and the key is
remembered as unsupported for the rest of the process.
"""

from __future__ import annotations

import os

from torch_npu.eager import disk_cache
from torch_npu.eager.plan import Plan, PlanError, plan_call
from torch_npu.eager.workers import CompileRejected, WorkerCrashed, pool

# Blocks a kernel may be split into; the simulated AI-core pool has one thread per host core.
BLOCK_DIM = int(os.environ.get("TORCH_NPU_EAGER_BLOCK_DIM", str(min(8, os.cpu_count() or 1))))


def _disk_key(key: bytes, plan: Plan, args: list) -> bytes:
    # Baked values select among kernels of one structural key, exactly as in the memory cache.
    return key + b"|" + repr([args[i] for i in plan.baked]).encode()


def _answer(plan: Plan, kernel: dict) -> dict:
    return dict(kernel, inputs=plan.inputs, params=plan.params, baked=plan.baked, targets=plan.targets,
                returns=plan.returns)


def compile_kernel(key: bytes, op_name: str, args: list) -> dict:
    """Metadata of the kernel for this call, from the disk cache or a compile worker.

    Raises PlanError / CompileRejected (the compiler cannot build it) or WorkerCrashed.
    """
    plan = plan_call(op_name, args, BLOCK_DIM)
    if plan.empty_outputs is not None:
        # Nothing to compute: the dispatcher allocates the (empty) results and launches nothing.
        return _answer(plan, {"so_path": "", "symbol": "", "block_dim": 0, "outputs": plan.empty_outputs})
    disk_key = _disk_key(key, plan, args)
    kernel = disk_cache.load(disk_key)
    if kernel is None:
        kernel = pool().compile(dict(plan.request, cache_dir=str(disk_cache.version_dir())))
        disk_cache.store(disk_key, kernel)
    return _answer(plan, kernel)


def compile_for_dispatch(key: bytes, op_name: str, args: list) -> dict:
    try:
        return compile_kernel(key, op_name, args)
    except (PlanError, CompileRejected) as err:
        return {"unsupported": f"{op_name}: {err}", "crashed": False}
    except WorkerCrashed as err:
        return {"unsupported": f"the compile worker crashed or hung on {op_name} ({err}); this call runs "
                               "on the CPU, and the same call will not be compiled again in this process. "
                               "ERR01005 OPS internal error", "crashed": True}
