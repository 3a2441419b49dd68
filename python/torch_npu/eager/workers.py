"""The pool of compile workers: MLIR runs out of process, so its crashes cannot kill the user's.

Workers (`python -m npu_mlir.tools.compile_worker` subprocesses, at most $TORCH_NPU_COMPILE_WORKERS,
default 2) start in the background on the first miss and serve requests one at a time each: one at first,
another each time a request finds every worker busy while the host has a core to spare (its load average
below its core count less one half), so misses queued together (miss.py builds them in the background)
compile in parallel, while a lone first miss, or a host whose cores are all taken, does not pay a second
worker's ~3 s boot for no parallelism: at load 10-14 on 2 cores a second worker made the first step of
a 2-layer transformer LM slower (41-64 s against 31-34 s, +3 s of worker CPU). A worker that dies or exceeds $TORCH_NPU_COMPILE_TIMEOUT seconds
(default 300) is killed and replaced; the request that did it raises WorkerCrashed.
"""

from __future__ import annotations

import atexit
import os
import pickle
import queue
import select
import struct
import subprocess
import sys
import tempfile
import threading
import time

from npu_mlir.tools.compile_protocol import CompileRequest, KernelRecord

WORKER_MODULE = "npu_mlir.tools.compile_worker"


class WorkerCrashed(RuntimeError):
    """The worker died or timed out while compiling a request."""


class StaleRequest(WorkerCrashed):
    """The worker reads another protocol version than the request's: the call is not compiled (nor kept
    on disk as refused, which CompileRejected would be); the worker itself is sound and stays."""


class CompileRejected(RuntimeError):
    """The compiler refused the request (an error it raised, not a crash); the refusal holds for
    calls with the same values of arguments `baked`."""

    def __init__(self, reason: object, baked: list[int] | None = None) -> None:
        super().__init__(reason)
        self.baked = baked or []


def _timeout() -> float:
    return float(os.environ.get("TORCH_NPU_COMPILE_TIMEOUT", "300"))


def _spare_core() -> bool:
    """Whether another worker would get a core of its own: the host's load leaves one idle."""
    return os.getloadavg()[0] < (os.cpu_count() or 1) - 0.5


class Worker:
    def __init__(self, env: dict) -> None:
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen([sys.executable, "-m", WORKER_MODULE], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self.log, env=env)
        self.ready = False

    def _read(self, size: int, deadline: float) -> bytes:
        data = b""
        fd = self.process.stdout.fileno()
        while len(data) < size:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise WorkerCrashed(f"the compile worker gave no answer within {_timeout():.0f} s "
                                    "(TORCH_NPU_COMPILE_TIMEOUT)")
            chunk = os.read(fd, size - len(data))
            if not chunk:
                raise WorkerCrashed(f"the compile worker died ({self._exit_reason()}): {self._log_tail()}")
            data += chunk
        return data

    def _exit_reason(self) -> str:
        code = self.process.wait(timeout=10)
        return f"killed by signal {-code}" if code < 0 else f"exit code {code}"

    def _log_tail(self) -> str:
        self.log.seek(0)
        text = self.log.read().decode(errors="replace").strip().splitlines()
        return " | ".join(text[-3:])[-600:] or "no message"

    def call(self, request: CompileRequest) -> KernelRecord:
        deadline = time.monotonic() + _timeout()
        if not self.ready:
            self._read(4, deadline)
            self.ready = True
        data = pickle.dumps(request)
        try:
            self.process.stdin.write(struct.pack("<I", len(data)) + data)
            self.process.stdin.flush()
        except BrokenPipeError:
            raise WorkerCrashed(f"the compile worker died ({self._exit_reason()}): {self._log_tail()}") from None
        size = struct.unpack("<I", self._read(4, deadline))[0]
        status, payload = pickle.loads(self._read(size, deadline))
        if status == "stale":
            raise StaleRequest(f"the compile worker refused the request: {payload}")
        if status != "ok":
            raise CompileRejected(payload)
        if not isinstance(payload, KernelRecord):
            raise WorkerCrashed(f"the compile worker answered with a {type(payload).__name__}, not a KernelRecord "
                                "(a worker of another torch_npu version?)")
        return payload

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.log.close()


class CompilePool:
    def __init__(self, size: int, env: dict) -> None:
        self._size = size
        self._env = env
        self._idle: queue.Queue[Worker] = queue.Queue()
        self._all: list[Worker] = []
        self._lock = threading.Lock()
        self.crashes = 0

    def _start(self) -> None:
        worker = Worker(self._env)
        with self._lock:
            self._all.append(worker)
        self._idle.put(worker)

    @property
    def size(self) -> int:
        return self._size

    def start(self, count: int | None = None) -> None:
        """Have at least `count` workers (default: the pool's size) running or booting."""
        with self._lock:
            missing = min(self._size, self._size if count is None else count) - len(self._all)
        for _ in range(missing):
            self._start()

    def compile(self, request: CompileRequest) -> KernelRecord:
        with self._lock:
            if not self._all or (self._idle.empty() and len(self._all) < self._size and _spare_core()):
                self._all.append(Worker(self._env))
                self._idle.put(self._all[-1])
        worker = self._idle.get()
        try:
            result = worker.call(request)
        except StaleRequest:
            self._idle.put(worker)
            raise
        except WorkerCrashed:
            self.crashes += 1
            with self._lock:
                self._all.remove(worker)
            worker.kill()
            self._start()
            raise
        except BaseException:
            self._idle.put(worker)
            raise
        self._idle.put(worker)
        return result

    def shutdown(self) -> None:
        with self._lock:
            workers, self._all = self._all, []
        for worker in workers:
            worker.kill()


_pool: list[CompilePool] = []
_pool_lock = threading.Lock()


def pool() -> CompilePool:
    """The process's pool, created on first use."""
    with _pool_lock:
        if not _pool:
            size = max(1, int(os.environ.get("TORCH_NPU_COMPILE_WORKERS", "2")))
            _pool.append(CompilePool(size, dict(os.environ)))
            atexit.register(_pool[0].shutdown)
        return _pool[0]
