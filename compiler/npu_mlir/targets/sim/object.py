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
from typing import Sequence

from torch_mlir import ir
from torch_mlir.execution_engine import ExecutionEngine

from npu_mlir.errors import SimCompileError
from npu_mlir.targets.sim.cache import cache_root
from npu_mlir.targets.sim.scratch import ALLOC, FREE, SLOTS_GLOBAL

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
# ... except for a kernel that only moves data, has a large body and touches few elements: -O3's
# cost grows faster than the code (GVN, LICM and unswitching over one function of many loop
# nests), and -O0 costs a few nanoseconds per element. conv_transpose3d's window gather (120
# five-deep copy nests, 10k LLVM ops) took 59.5 s at -O3, 28.6 s at -O2 and 1.8 s at -O0, a
# 1.6k-op gather of 17k elements 2.84 s at -O3 and 0.16 s at -O0 (load 10); its backward's
# 14.5k-op gather of 231k elements and two 5k-op ones of 123k-192k took most of 248 s at -O3. A
# kernel computing on vectors keeps -O3: a matmul's or an elementwise kernel's speed is its vector
# code's. (The -O0 kernels' run time against -O3 is not measured yet.)
LARGE_KERNEL_OPS = 800
FEW_ELEMENTS = 1 << 18
_VECTOR_MOVES = frozenset({"llvm.load", "llvm.intr.masked.load", "llvm.mlir.poison", "llvm.mlir.undef",
                           "llvm.mlir.constant", "llvm.shufflevector", "llvm.insertelement",
                           "llvm.extractelement", "llvm.bitcast"})


def _moves_only(module: ir.Module) -> tuple[int, bool]:
    """(operations, whether no operation computes on vectors) of an LLVM-dialect module."""
    count, computes = 0, False

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal count, computes
        count += 1
        if not computes and op.name not in _VECTOR_MOVES and any(isinstance(r.type, ir.VectorType)
                                                                 for r in op.results):
            computes = True
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return count, not computes


def opt_level_for(module: ir.Module, elements: int) -> int:
    """The -O level of a kernel's LLVM-dialect module; `elements`: its arguments' and results' elements."""
    if elements <= FEW_ELEMENTS:
        operations, moves_only = _moves_only(module)
        if operations > LARGE_KERNEL_OPS and moves_only:
            return 0
    return OPT_LEVEL


def drop_unused_scratch(module: ir.Module) -> None:
    """Remove the scratch allocator (scratch.py) from a module whose kernels allocate nothing: every
    module defines it, public, so LLVM keeps and compiles it (and its packed wrappers), ~5 ms of
    CPU per module: a sixth of an elementwise kernel's code generation."""
    helpers = {ALLOC, FREE, SLOTS_GLOBAL}
    ops = list(module.body.operations)
    names = [ir.StringAttr(op.attributes["sym_name"]).value if "sym_name" in op.attributes else None for op in ops]
    used = False

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal used
        if op.name == "llvm.call" and "callee" in op.attributes and \
                ir.FlatSymbolRefAttr(op.attributes["callee"]).value in (ALLOC, FREE):
            used = True
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    for op, name in zip(ops, names):
        if name not in helpers:
            op.operation.walk(visit)
            if used:
                return
    for op, name in zip(ops, names):
        if name in helpers:
            op.operation.erase()


def build_shared_object(parts: Sequence[tuple[ir.Module, int]], so_path: Path) -> None:
    """One shared object of LLVM-dialect modules, each generated at its (module, -O level)."""
    with tempfile.TemporaryDirectory(dir=so_path.parent) as tmp:
        objects = []
        for n, (llvm_module, opt_level) in enumerate(parts):
            drop_unused_scratch(llvm_module)
            engine = ExecutionEngine(llvm_module, opt_level=opt_level, enable_object_dump=True, enable_pic=True)
            obj = Path(tmp) / f"kernel{n}.o"
            engine.dump_to_object_file(str(obj))
            if not obj.exists():
                # The JIT reports codegen failures on stderr only ("Failed to materialize symbols") and
                # dumps nothing: seen for bf16 pad + transpose kernels.
                raise SimCompileError("LLVM could not generate machine code for this kernel (its message is on "
                                      "stderr); the sim target does not support it yet", code="ERR03007")
            objects.append(str(obj))
        staged = Path(tmp) / so_path.name
        linker = _linker()
        # Each object defines the scratch allocator's _mlir_memref_to_llvm_alloc / _free (scratch.py)
        # and the engine's packed wrappers of them, the same code: the first definition serves all.
        shared = [] if len(objects) == 1 else ["-z", "muldefs"] if linker != "cc" else ["-Wl,-z,muldefs"]
        result = subprocess.run([linker, "-shared", *shared, "-o", str(staged), *objects, _libm()],
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
