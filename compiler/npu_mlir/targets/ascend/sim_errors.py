"""The error the simulated-device build raises: a torch_npu ERR code plus what to do about it."""

from __future__ import annotations


class SimCompileError(RuntimeError):
    """A kernel could not be built for the simulated device (ERR03xxx: GRAPH submodule)."""

    def __init__(self, message: str, code: str = "ERR03005") -> None:
        super().__init__(f"{code} GRAPH {message}")
        self.code = code
