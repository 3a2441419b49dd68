"""Shared objects for the simulated device: LLVM module -> object file -> .so, and loading them.

The ExecutionEngine compiles the LLVM dialect with the host's code generator; its object file is
linked with `cc -shared` into the kernel cache directory so the runtime (and later processes) can
dlopen it without MLIR. Files are written to a temporary name and renamed, so a concurrent reader
never sees half a library.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from torch_mlir import ir
from torch_mlir.execution_engine import ExecutionEngine

from npu_mlir.errors import SimCompileError
from npu_mlir.targets.sim.cache import cache_root

_loaded: dict[str, ctypes.CDLL] = {}
_load_lock = threading.Lock()


def cache_dir() -> Path:
    """Directory for built kernels (cache.py), created on first use."""
    path = cache_root()
    path.mkdir(parents=True, exist_ok=True)
    return path


def _linker() -> str:
    # ld directly: the cc driver costs ~20 ms per kernel just to start and pick its arguments.
    return shutil.which("ld") or "cc"


@functools.cache
def _libm() -> str:
    """libm as the linker should take it: the file this process has mapped, else -lm. `-lm` makes ld
    read glibc's linker script and search its directories: ~13 ms of a ~17 ms link, per kernel."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split(maxsplit=5)[-1].strip()
                if os.path.basename(path) == "libm.so.6" and os.path.exists(path):
                    return path
    except OSError:
        pass
    return "-lm"


# LLVM's optimisation level for kernels. -O1 builds no faster than -O3 here; -O0 halves codegen
# (~25 -> ~12 ms a kernel) but a transposed copy runs 1.1-1.8x slower, and one softmax run was 12x
# slower (bench_pipeline.py --stages / --run-time).
OPT_LEVEL = 3


def build_shared_object(llvm_module: ir.Module, so_path: Path, opt_level: int | None = None) -> None:
    engine = ExecutionEngine(llvm_module, opt_level=OPT_LEVEL if opt_level is None else opt_level,
                             enable_object_dump=True, enable_pic=True)
    with tempfile.TemporaryDirectory(dir=so_path.parent) as tmp:
        obj = Path(tmp) / "kernel.o"
        engine.dump_to_object_file(str(obj))
        if not obj.exists():
            # The JIT reports codegen failures on stderr only ("Failed to materialize symbols") and
            # dumps nothing: seen for bf16 pad + transpose kernels.
            raise SimCompileError("LLVM could not generate machine code for this kernel (its message is on "
                                  "stderr); the sim target does not support it yet", code="ERR03007")
        staged = Path(tmp) / so_path.name
        result = subprocess.run([_linker(), "-shared", "-o", str(staged), str(obj), _libm()],
                                capture_output=True, text=True)
        if result.returncode != 0:
            raise SimCompileError(f"linking the kernel failed ({result.stderr.strip()}); check that binutils "
                                  "(ld) or a C compiler (cc) is installed", code="ERR03009")
        os.replace(staged, so_path)


def load_symbol(so_path: str, symbol: str) -> ctypes._CFuncPtr:
    """The kernel as a ctypes function (int32 f(const void*, uint32, uint32)); loads each .so once."""
    with _load_lock:
        lib = _loaded.get(so_path)
        if lib is None:
            lib = ctypes.CDLL(so_path, mode=ctypes.RTLD_LOCAL)
            _loaded[so_path] = lib
    fn = getattr(lib, symbol)
    fn.restype = ctypes.c_int32
    fn.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32]
    return fn
