"""The persistent kernel cache: one entry per call key, under a directory keyed by compiler version.

    $TORCH_NPU_KERNEL_CACHE (default ~/.cache/torch_npu/kernels)/<version>/
        entry-<hash of key>.json   the record (launch list, kernel sources) + the sha256 of each library
        npu_sim_*.so               the kernels (written by the sim target's own memo)

An eager entry also holds the call's dispatch plan (which arguments feed the kernel, which are
parameters, where results go: torch_npu.eager.miss), so a later process serves the call from this
entry alone, without planning it (planning imports torch._dynamo) or starting a compile worker. Its
key is the dispatcher's structural key followed by the values of the arguments the kernel was built
for (`call_key`); a call with such "baked" arguments also has a marker entry under the bare key that
names them, as the dispatcher's memory cache does. A call the compiler refused is kept too (its
record has no launches and says why), so a warm process sends it to the CPU without asking again.

The version hashes every source file of the compiler (the npu_mlir package folder: passes, emitters,
front end, references, the CPU twin's headers), this package's sources (the plan an entry holds) and
the torch / torch-mlir versions, so a changed compiler never loads a stale kernel; any edit under
compiler/npu_mlir/ starts an empty directory. An entry whose JSON does not parse, whose libraries are
missing or whose bytes no longer match the recorded hashes is deleted with its libraries, and the call
compiles again; so is an entry of another protocol version (npu_mlir.tools.compile_protocol), which
the version directory's hash should already keep apart. Nothing here imports MLIR.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import torch

from npu_mlir.frontend.kernel_build import PIPELINE_ENV
from npu_mlir.targets.sim.cache import CACHE_ENV, cache_root, compiler_fingerprint, hash_sources
from npu_mlir.tools.compile_protocol import (Dispatch, EagerAnswer, KernelRecord, Launch, Rejected, StaleRecord,
                                             Stored, Unsupported, dispatch_from_json, dispatch_to_json, from_json,
                                             to_json)

__all__ = ["CACHE_ENV", "cache_root", "call_key", "compiler_version", "entry_path", "load", "load_answer",
           "store", "store_baked", "version_dir"]
_version: list[str] = []


def compiler_version() -> str:
    if not _version:
        digest = hashlib.sha256(compiler_fingerprint().encode())  # npu_mlir's sources, torch-mlir, host ISA
        hash_sources(digest, Path(__file__).parent)  # the plans an entry holds
        digest.update(torch.__version__.encode())
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


def call_key(key: bytes, baked: list[int], args: list) -> bytes:
    """The entry key of an eager call: its structural key and the values of its baked arguments (as
    the dispatcher describes them), which select among kernels of one structural key."""
    return key + b"|" + repr([args[i] for i in baked]).encode()


def _discard(entry: Path, libraries: list[Path]) -> None:
    for path in [entry] + [p for lib in libraries for p in (lib, lib.with_suffix(".json"))]:
        path.unlink(missing_ok=True)


def _read(key: bytes) -> dict | None:
    """The entry of `key` as stored (its record still JSON), or None (a damaged entry is removed with its
    libraries)."""
    entry = entry_path(key)
    try:
        text = entry.read_text()
    except FileNotFoundError:
        return None
    except OSError:
        text = ""
    libraries: list[Path] = []
    try:
        meta = json.loads(text)
        libraries = [entry.parent / name for name, _ in meta["libraries"]]
        intact = all(lib.exists() and _file_hash(lib) == digest for lib, (_, digest) in zip(libraries, meta["libraries"]))
        if meta["key"] == key.hex() and intact:
            return meta
    except (ValueError, KeyError, TypeError, AttributeError):
        pass
    _discard(entry, libraries)
    return None


def _record(key: bytes, meta: dict) -> Stored | None:
    """The typed record of an entry, its launches' so_path made absolute; None (and the entry removed)
    when another protocol version wrote it."""
    entry = entry_path(key)
    try:
        stored = from_json(meta["kernel"])
    except (StaleRecord, KeyError, TypeError):
        _discard(entry, [entry.parent / name for name, _ in meta.get("libraries", [])])
        return None
    if isinstance(stored, KernelRecord) and stored.launches:
        launches = tuple(Launch(str(entry.parent / l.so_path), l.symbol, l.block_dim, l.refs) for l in stored.launches)
        stored = dataclasses.replace(stored, launches=launches)
    return stored


def load(key: bytes) -> Stored | None:
    """The stored record for `key` (its launches' so_path made absolute), or None."""
    meta = _read(key)
    return _record(key, meta) if meta is not None and "kernel" in meta else None


def load_answer(key: bytes, args: list) -> EagerAnswer | Unsupported | None:
    """What miss.py answers the dispatcher for this call, as an earlier process stored it, or None."""
    baked: list[int] = []
    entry_key = call_key(key, baked, args)
    meta = _read(entry_key)
    if meta is None:
        marker = _read(key)
        if marker is None or "baked" not in marker:
            return None
        baked = marker["baked"]
        entry_key = call_key(key, baked, args)
        meta = _read(entry_key)
    if meta is None or "dispatch" not in meta or "kernel" not in meta:
        return None
    stored = _record(entry_key, meta)
    if isinstance(stored, Rejected):
        return Unsupported(stored.reason, crashed=False, baked=tuple(baked))
    if stored is None:
        return None
    try:
        return EagerAnswer(stored, dispatch_from_json(meta["dispatch"]))
    except StaleRecord:
        _discard(entry_path(entry_key), [])
        return None


def _write(key: bytes, meta: dict) -> None:
    entry = entry_path(key)
    staged = entry.with_suffix(f".tmp{os.getpid()}")
    staged.write_text(json.dumps(dict(meta, key=key.hex())))
    os.replace(staged, entry)


def store(key: bytes, stored: Stored, dispatch: Dispatch | None = None, eager: bool = False) -> None:
    """Keep `stored` (a launch list, or the compiler's refusal) for `key`, with an eager call's `dispatch`
    plan (`eager`: an eager call's entry, which a refusal is too); its libraries are in version_dir()."""
    libraries: list[Path] = []
    if isinstance(stored, KernelRecord) and stored.launches:
        libraries = [Path(launch.so_path) for launch in stored.launches]
        stored = dataclasses.replace(stored, launches=tuple(
            Launch(Path(l.so_path).name, l.symbol, l.block_dim, l.refs) for l in stored.launches))
    meta: dict[str, Any] = {"libraries": [(lib.name, _file_hash(lib)) for lib in dict.fromkeys(libraries)],
                            "kernel": to_json(stored)}
    if dispatch is not None or eager:
        meta["dispatch"] = dispatch_to_json(dispatch) if dispatch is not None else None
    _write(key, meta)


def store_baked(key: bytes, baked: list[int]) -> None:
    """Mark the structural `key` as one whose entries are keyed by the values of arguments `baked`."""
    _write(key, {"libraries": [], "baked": baked})
