"""The compiler's error type: a torch_npu ERR code plus what to do about it.

Today only the simulated-device build (targets/sim/) raises it; the other compiler errors are still
their own classes (issue #9 item 6 folds them in)."""

from __future__ import annotations


class SimCompileError(RuntimeError):
    """A kernel could not be built for the simulated device (ERR03xxx: GRAPH submodule)."""

    def __init__(self, message: str, code: str = "ERR03005") -> None:
        super().__init__(f"{code} GRAPH {message}")
        self.code = code
