"""The persistent kernel cache: one entry per call key, under a directory keyed by compiler version.

    $TORCH_NPU_KERNEL_CACHE (default ~/.cache/torch_npu/kernels)/<version>/
        entry-<hash of key>.json   metadata + the sha256 of the shared object
        npu_sim_*.so               the kernels (written by the sim target's own memo)

The version hashes the compiler's sources (npu_mlir and this package's build code) and the torch /
torch-mlir versions, so a changed compiler never loads a stale kernel. An entry whose JSON does not
parse, whose library is missing or whose bytes no longer match the recorded hash is deleted with its
library, and the call compiles again.
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib import metadata
from pathlib import Path

import torch

import npu_mlir

CACHE_ENV = "TORCH_NPU_KERNEL_CACHE"
_version: list[str] = []


def compiler_version() -> str:
    if not _version:
        digest = hashlib.sha256()
        roots = [Path(npu_mlir.__file__).parent, Path(__file__).parent]
        for root in roots:
            for source in sorted(root.rglob("*.py")):
                digest.update(str(source.relative_to(root)).encode())
                digest.update(source.read_bytes())
        digest.update(torch.__version__.encode())
        digest.update(metadata.version("torch-mlir").encode())
        _version.append(digest.hexdigest()[:16])
    return _version[0]


def cache_root() -> Path:
    root = os.environ.get(CACHE_ENV) or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "torch_npu", "kernels")
    return Path(root)


def version_dir() -> Path:
    path = cache_root() / compiler_version()
    path.mkdir(parents=True, exist_ok=True)
    return path


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def entry_path(key: bytes) -> Path:
    return version_dir() / f"entry-{hashlib.sha256(key).hexdigest()[:32]}.json"


def _discard(entry: Path, library: Path | None) -> None:
    for path in (entry, library, library.with_suffix(".json") if library else None):
        if path is not None:
            path.unlink(missing_ok=True)


def load(key: bytes) -> dict | None:
    """The stored metadata for `key`, or None (a damaged entry is removed)."""
    entry = entry_path(key)
    if not entry.exists():
        return None
    library = None
    try:
        meta = json.loads(entry.read_text())
        library = entry.parent / meta["library"]
        if meta["key"] == key.hex() and library.exists() and _file_hash(library) == meta["sha256"]:
            return dict(meta["kernel"], so_path=str(library))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    _discard(entry, library)
    return None


def store(key: bytes, kernel: dict) -> None:
    library = Path(kernel["so_path"])
    meta = {"key": key.hex(), "library": library.name, "sha256": _file_hash(library),
            "kernel": {k: v for k, v in kernel.items() if k != "so_path"}}
    entry = entry_path(key)
    staged = entry.with_suffix(f".tmp{os.getpid()}")
    staged.write_text(json.dumps(meta))
    os.replace(staged, entry)
