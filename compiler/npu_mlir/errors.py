"""The compiler's one error type: an ERR03xxx code (the GRAPH submodule) plus what to do about it.

Codes follow torch_npu's table (torch_npu/utils/error_code.py, DESIGN.md section 6; npu_mlir does
not import torch_npu, so the GRAPH codes the compiler uses are repeated here):
  ERR03001 invalid parameter    a bad pass option, pipeline text or kernel signature
  ERR03003 invalid value        a stage run out of order, a bad tiling record
  ERR03005 internal error       a stage or a build failed (the diagnostics follow)
  ERR03006 memory error         a kernel does not fit the target's local memory
  ERR03007 feature not supported  an op or kernel the compiler cannot take yet
  ERR03008 resource not found   an unknown pass or stage
Every error the compiler raises is a `CompilerError` (the classes per stage derive from it, and
from ValueError where they always did); `code` holds the code, the message starts with it.
"""

from __future__ import annotations

import re

INVALID_PARAMETER = "ERR03001"
INVALID_VALUE = "ERR03003"
INTERNAL = "ERR03005"
MEMORY = "ERR03006"
NOT_SUPPORTED = "ERR03007"
NOT_FOUND = "ERR03008"

_CODE = re.compile(r"^(ERR03\d{3}) GRAPH ")


class CompilerError(RuntimeError):
    """A compile failed; the message starts with its ERR code and says what to do."""

    code = INTERNAL  # the default of each subclass

    def __init__(self, message: str, code: str | None = None) -> None:
        found = _CODE.match(message)
        self.code = code or (found.group(1) if found else type(self).code)
        self.detail = message[found.end():] if found else message  # for a message that embeds it
        super().__init__(f"{self.code} GRAPH {self.detail}")


class SimCompileError(CompilerError):
    """A kernel could not be built for the simulated device."""
