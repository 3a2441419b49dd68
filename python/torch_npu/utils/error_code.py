"""torch_npu's error codes on the Python side (DESIGN.md section 6).

Every error torch_npu raises ends with ``ERR<submodule 2 digits><code 3 digits>
<submodule> <meaning>``, e.g. ``ERR00007 PTA feature not supported``: the same text
the C++ side (csrc/NpuError.cpp) appends, so one grep finds both.
"""

from enum import IntEnum

__all__ = ["ErrCode", "SubModule", "npu_error", "pta_error"]


class SubModule(IntEnum):
    """The component an error comes from."""

    PTA = 0
    OPS = 1
    DIST = 2
    GRAPH = 3
    PROF = 4


class ErrCode(IntEnum):
    """What kind of error it is."""

    PARAM = 1
    TYPE = 2
    VALUE = 3
    PTR = 4
    INTERNAL = 5
    MEMORY = 6
    NOT_SUPPORT = 7
    NOT_FOUND = 8
    UNAVAIL = 9
    TIMEOUT = 11
    ACL = 100
    HCCL = 200


_MEANING = {
    ErrCode.PARAM: "invalid parameter",
    ErrCode.TYPE: "invalid type",
    ErrCode.VALUE: "invalid value",
    ErrCode.PTR: "invalid pointer",
    ErrCode.INTERNAL: "internal error",
    ErrCode.MEMORY: "memory error",
    ErrCode.NOT_SUPPORT: "feature not supported",
    ErrCode.NOT_FOUND: "resource not found",
    ErrCode.UNAVAIL: "resource unavailable",
    ErrCode.TIMEOUT: "timeout error",
    ErrCode.ACL: "call acl api failed",
    ErrCode.HCCL: "call hccl api failed",
}


def npu_error(submodule: SubModule, code: ErrCode) -> str:
    """Return the code text to append to a message, e.g. ``"ERR01007 OPS feature not supported"``."""
    return f"ERR{int(submodule):02d}{int(code):03d} {submodule.name} {_MEANING[code]}"


def pta_error(code: ErrCode) -> str:
    """Return the code text for an error of the PTA (torch adapter) submodule."""
    return npu_error(SubModule.PTA, code)
