"""Operator data dumps for accuracy comparison: torch_npu's ``init_dump`` / ``set_dump`` / ``finalize_dump``.

::

    torch.npu.init_dump()
    torch.npu.set_dump("acl.json")   # {"dump": {"dump_path": "out", "dump_mode": "all", "dump_list": []}}
    ... run the model ...
    torch.npu.finalize_dump()

While a dump is active every aten op that has an NPU tensor among its arguments or
results writes one file ``<dump_path>/<seq>_<op>.pt`` (``torch.load`` it) holding its
``"op"`` name and CPU copies of its ``"inputs"`` and ``"outputs"`` tensors
(``dump_mode`` "input" / "output" keeps one side; ``dump_list`` of op names, e.g.
``["aten.add.Tensor"]``, restricts the ops). Dumping runs on the thread that called
:func:`init_dump` and synchronizes each op (the copies are blocking), as on hardware.
"""

import json
import os
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["finalize_dump", "init_dump", "set_dump"]

_MODES = ("all", "input", "output")


class _DumpMode(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.path: str | None = None
        self.mode = "all"
        self.ops: set[str] = set()
        self.seq = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if self.path is not None and (not self.ops or str(func) in self.ops):
            inputs = [a for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)]
            outputs = [o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor)]
            if any(t.device.type == "npu" for t in inputs + outputs):
                self._write(str(func), inputs, outputs)
        return out

    def _write(self, name: str, inputs: list[torch.Tensor], outputs: list[torch.Tensor]) -> None:
        with torch.utils._python_dispatch._disable_current_modes():
            record: dict[str, Any] = {"op": name}
            if self.mode in ("all", "input"):
                record["inputs"] = [t.detach().cpu().clone() for t in inputs]
            if self.mode in ("all", "output"):
                record["outputs"] = [t.detach().cpu().clone() for t in outputs]
            torch.save(record, os.path.join(self.path, f"{self.seq:06d}_{name.replace('.', '_')}.pt"))
        self.seq += 1


_active: _DumpMode | None = None


def init_dump() -> None:
    """Start the dump session (ops are written once :func:`set_dump` gave a path)."""
    global _active
    if _active is not None:
        raise RuntimeError("init_dump was already called; call finalize_dump first\n" + pta_error(ErrCode.UNAVAIL))
    _active = _DumpMode()
    _active.__enter__()


def set_dump(cfg_file: str) -> None:
    """Configure the dump from an acl.json-style file (``{"dump": {"dump_path": ..., ...}}``).

    Raises:
        RuntimeError (ERR00009): no :func:`init_dump` session.
        ValueError / TypeError: the file is missing, not JSON, or lacks ``dump.dump_path``.
    """
    if _active is None:
        raise RuntimeError("set_dump needs init_dump() first\n" + pta_error(ErrCode.UNAVAIL))
    if not isinstance(cfg_file, str):
        raise TypeError(f"cfg_file must be a path str, got {type(cfg_file).__name__}\n" + pta_error(ErrCode.TYPE))
    try:
        with open(cfg_file) as f:
            config = json.load(f)["dump"]
        path = config["dump_path"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{cfg_file} is not a dump config with dump.dump_path: {error}\n"
                         + pta_error(ErrCode.VALUE)) from error
    mode = config.get("dump_mode", "all")
    if mode not in _MODES:
        raise ValueError(f"dump_mode must be one of {_MODES}, got {mode!r}\n" + pta_error(ErrCode.VALUE))
    os.makedirs(path, exist_ok=True)
    _active.path, _active.mode = path, mode
    _active.ops = {str(entry) for entry in config.get("dump_list", []) if entry}


def finalize_dump() -> None:
    """End the dump session; later ops are no longer written."""
    global _active
    if _active is None:
        raise RuntimeError("finalize_dump without init_dump\n" + pta_error(ErrCode.UNAVAIL))
    mode, _active = _active, None
    mode.__exit__(None, None, None)
