"""Where built kernels live and which compiler built them, for the sim target and the disk cache.

The compiler is torch_npu's kernel builder, so the two share a directory: the sim target writes
its .so files there (npu-opt, tests), and torch_npu's disk cache keys its records under it. Both
key what they store by `compiler_fingerprint()`: every source file of the npu_mlir package (passes,
emitters, front end, references, the CPU twin's headers), the torch-mlir version and the host's
instruction set, so an edit anywhere in the compiler never loads a kernel it would now build
differently, and a cache shared by another machine never loads a kernel this CPU cannot run (the
sim's code generator targets the host: AVX-512 tiles, vdpbf16ps).
Plain os/pathlib/hashlib, so the user's process reads it without loading MLIR.
"""

from __future__ import annotations

import hashlib
import os
from importlib import metadata
from pathlib import Path

from npu_mlir.hardware import host_cpu

CACHE_ENV = "TORCH_NPU_KERNEL_CACHE"


def cache_root() -> Path:
    """$TORCH_NPU_KERNEL_CACHE, else $XDG_CACHE_HOME/torch_npu/kernels (~/.cache by default)."""
    root = os.environ.get(CACHE_ENV) or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "torch_npu", "kernels")
    return Path(root)


def source_files(root: Path) -> list[Path]:
    """Every file under `root` but Python's bytecode caches (a CPU twin header changes the AscendC build too)."""
    return sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def hash_sources(digest: "hashlib._Hash", root: Path) -> None:
    for source in source_files(root):
        digest.update(str(source.relative_to(root)).encode())
        digest.update(source.read_bytes())


_fingerprint: list[str] = []


def compiler_fingerprint() -> str:
    """Hash of the npu_mlir package's sources, the torch-mlir version and the host's ISA (once per process)."""
    if not _fingerprint:
        digest = hashlib.sha256()
        hash_sources(digest, Path(__file__).resolve().parents[2])
        digest.update(metadata.version("torch-mlir").encode())
        digest.update(host_cpu.isa().encode())
        _fingerprint.append(digest.hexdigest())
    return _fingerprint[0]
