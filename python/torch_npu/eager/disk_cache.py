"""The persistent kernel cache: one entry per call key, under a directory keyed by compiler version.

    $TORCH_NPU_KERNEL_CACHE (default ~/.cache/torch_npu/kernels)/<version>/
        entry-<hash of key>.json   the record (launch list, kernel sources) + the sha256 of each library
        npu_sim_*.so               the kernels (written by the sim target's own memo)

The version hashes every source file of the compiler (the npu_mlir package folder: passes, emitters,
front end, references, the CPU twin's headers) and the torch / torch-mlir versions, so a changed
compiler never loads a stale kernel; any edit under compiler/npu_mlir/ starts an empty directory. An entry whose JSON does not
parse, whose libraries are missing or whose bytes no longer match the recorded hashes is deleted with
its libraries, and the call compiles again.
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib import metadata
from pathlib import Path

import torch

import npu_mlir
from npu_mlir.frontend.kernel_build import PIPELINE_ENV
from npu_mlir.targets.sim.cache import CACHE_ENV, cache_root

__all__ = ["CACHE_ENV", "cache_root", "compiler_version", "entry_path", "load", "store", "version_dir"]
_version: list[str] = []


def _compiler_sources(root: Path) -> list[Path]:
    # Every file but Python's bytecode caches: a header of the CPU twin changes the AscendC build too.
    return sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def compiler_version() -> str:
    if not _version:
        digest = hashlib.sha256()
        root = Path(npu_mlir.__file__).parent
        for source in _compiler_sources(root):
            digest.update(str(source.relative_to(root)).encode())
            digest.update(source.read_bytes())
        digest.update(torch.__version__.encode())
        digest.update(metadata.version("torch-mlir").encode())
        digest.update(os.environ.get(PIPELINE_ENV, "1").encode())  # which path built the records
        _version.append(digest.hexdigest()[:16])
    return _version[0]


def version_dir() -> Path:
    path = cache_root() / compiler_version()
    path.mkdir(parents=True, exist_ok=True)
    return path


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def entry_path(key: bytes) -> Path:
    return version_dir() / f"entry-{hashlib.sha256(key).hexdigest()[:32]}.json"


def _discard(entry: Path, libraries: list[Path]) -> None:
    for path in [entry] + [p for lib in libraries for p in (lib, lib.with_suffix(".json"))]:
        path.unlink(missing_ok=True)


def load(key: bytes) -> dict | None:
    """The stored record for `key` (its launches' so_path made absolute), or None (a damaged
    entry is removed with its libraries)."""
    entry = entry_path(key)
    if not entry.exists():
        return None
    libraries: list[Path] = []
    try:
        meta = json.loads(entry.read_text())
        libraries = [entry.parent / name for name, _ in meta["libraries"]]
        intact = all(lib.exists() and _file_hash(lib) == digest for lib, (_, digest) in zip(libraries, meta["libraries"]))
        if meta["key"] == key.hex() and intact:
            record = meta["kernel"]
            for launch in record["launches"]:
                launch["so_path"] = str(entry.parent / launch["so_path"])
            return record
    except (OSError, ValueError, KeyError, TypeError):
        pass
    _discard(entry, libraries)
    return None


def store(key: bytes, record: dict) -> None:
    """Keep `record` (a launch list, see kernel_build) for `key`; its libraries are in version_dir()."""
    libraries = [Path(launch["so_path"]) for launch in record["launches"]]
    stored = dict(record, launches=[dict(launch, so_path=Path(launch["so_path"]).name) for launch in record["launches"]])
    meta = {"key": key.hex(), "libraries": [(lib.name, _file_hash(lib)) for lib in dict.fromkeys(libraries)],
            "kernel": stored}
    entry = entry_path(key)
    staged = entry.with_suffix(f".tmp{os.getpid()}")
    staged.write_text(json.dumps(meta))
    os.replace(staged, entry)
