"""Lazy initialisation of the NPU state, as torch.cuda does it.

Nothing touches a device until the first call that needs one: then
:func:`_lazy_init` runs once, under a lock, and replays the calls queued before
(seeding, mostly), each with the traceback of where it was made. A process that
forks after initialisation cannot use the NPU in the child (the runtime's stream
workers do not survive fork): the child gets an error that names the fix.
"""

import os
import threading
import traceback
from collections.abc import Callable

from torch_npu import _C
from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["init", "is_initialized"]

_initialized = False
_in_bad_fork = False
_tls = threading.local()
_initialization_lock = threading.Lock()
_queued_calls: list[tuple[Callable[[], None], list[str]]] = []


class _DeferredNpuCallError(Exception):
    pass


def _is_in_bad_fork() -> bool:
    return _in_bad_fork or _C._npu_is_in_bad_fork()


def is_initialized() -> bool:
    r"""Return whether torch_npu's NPU state has been initialized."""
    return _initialized and not _is_in_bad_fork()


def _lazy_call(callable: Callable[[], None]) -> None:
    """Run ``callable`` now if the NPU is initialised, else at initialisation."""
    with _initialization_lock:
        if is_initialized():
            callable()
        else:
            _queued_calls.append((callable, traceback.format_stack()))


def init() -> None:
    r"""Initialize torch_npu's NPU state.

    Ordinary users need not call this: every torch.npu function that needs a device
    initializes on demand. Does nothing if the state is already initialized.
    """
    _lazy_init()


def _lazy_init() -> None:
    global _initialized
    if is_initialized() or hasattr(_tls, "is_initializing"):
        return
    with _initialization_lock:
        # Double-checked: another thread may have finished while this one waited.
        if is_initialized():
            return
        if _is_in_bad_fork():
            raise RuntimeError(
                "Cannot re-initialize NPU in forked subprocess. To use NPU with multiprocessing, "
                "you must use the 'spawn' start method (multiprocessing.set_start_method('spawn')).\n"
                + pta_error(ErrCode.UNAVAIL)
            )
        if _C._npu_device_count() == 0:
            raise RuntimeError(
                "No NPU device is visible: check NPU_SIM_DEVICE_COUNT and ASCEND_RT_VISIBLE_DEVICES.\n"
                + pta_error(ErrCode.UNAVAIL)
            )
        # Queued calls may re-enter _lazy_init; they must return at once, while
        # other threads stay out until the queue has run.
        _tls.is_initializing = True
        try:
            for queued_call, orig_traceback in _queued_calls:
                try:
                    queued_call()
                except Exception as e:
                    msg = (
                        f"NPU call failed lazily at initialization with error: {e}\n\n"
                        f"NPU call was originally invoked at:\n\n{''.join(orig_traceback)}"
                    )
                    raise _DeferredNpuCallError(msg) from e
            _queued_calls.clear()
        finally:
            delattr(_tls, "is_initializing")
        _initialized = True


def _after_fork() -> None:
    global _initialized, _in_bad_fork
    if _initialized:
        _initialized = False
        _in_bad_fork = True
        # torch caches "npu already initialised" in C++; make it ask _lazy_init again.
        _C._npu_set_requires_device_init()


os.register_at_fork(after_in_child=_after_fork)
