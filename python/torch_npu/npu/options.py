"""CANN options torch_npu exposes that select behaviour of Ascend's compiler and libraries.

Every function here validates its arguments as torch_npu does and records the value
where torch_npu has a getter. None of them changes what the simulator computes: its
kernels come from the npu_mlir compiler, which has no AOE tuner, no online (jit)
operator compilation mode, no HF32 and no CANN option table. Each docstring says
what the option does on real hardware.
"""

from enum import IntEnum
from typing import Any

from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = [
    "CubeMathType",
    "are_compatible_impl_enabled",
    "get_mm_bmm_format_nd",
    "get_option",
    "get_task_queue_enable",
    "is_jit_compile_false",
    "set_aoe",
    "set_compile_mode",
    "set_mm_bmm_format_nd",
    "set_option",
    "set_task_queue_enable",
    "use_compatible_impl",
]

_options: dict[str, str] = {}
_state: dict[str, Any] = {"jit_compile": False, "mm_bmm_nd": True, "task_queue": 2, "compatible_impl": False,
                          "aoe_dump_path": None}


class CubeMathType(IntEnum):
    """How cube (matmul / conv) units treat float32 on Ascend: keep it, allow HF32, or use fp16.

    The simulator always computes float32 matmuls in float32 (KEEP_DTYPE's semantics).
    """

    KEEP_DTYPE = 0
    ALLOW_FP32_DOWN_PRECISION = 1
    USE_FP16 = 2
    USE_HF32 = 3


def _check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}\n" + pta_error(ErrCode.TYPE))
    return value


# The option names torch_npu registers (csrc/core/npu/register/OptionsManager's table): any other is refused.
_KNOWN_OPTIONS = frozenset({
    "autotune", "autotunegraphdumppath", "bmmv2_enable", "mdldumpswitch", "mdldumpconfigpath", "jitCompile",
    "jitCompileInit", "ACL_OP_DEBUG_LEVEL", "ACL_DEBUG_DIR", "ACL_OP_COMPILER_CACHE_MODE", "ACL_OP_COMPILER_CACHE_DIR",
    "ACL_AICORE_NUM", "ACL_PRECISION_MODE", "ACL_OP_SELECT_IMPL_MODE", "ACL_OPTYPELIST_FOR_IMPLMODE",
    "NPU_FUZZY_COMPILE_BLACKLIST", "FORCE_ACLNN_OP_LIST", "OP_HOOK_ENABLE", "MM_BMM_ND_ENABLE",
    "ALLOW_INTERNAL_FORMAT", "STRONG_CONSISTENCY", "COMPATIBLE_IMPL", "ALLOW_CONV_HF32", "ALLOW_MATMUL_HF32",
    "ACL_OP_DEBUG_OPTION", "CUBE_MATH_TYPE",
})
# The values torch_npu's set_option accepts for the compile options it checks.
_OPTION_VALUES = {
    "ACL_PRECISION_MODE": ["allow_fp32_to_fp16", "must_keep_origin_dtype"],
    "ACL_OP_SELECT_IMPL_MODE": ["high_performance", "high_precision"],
    "ACL_OP_DEBUG_LEVEL": ["0", "1", "2", "3", "4"],
    "ACL_OP_COMPILER_CACHE_MODE": ["disable", "enable", "force"],
}


def set_option(option: dict[str, Any]) -> None:
    """Set CANN session options (``{"ACL_OP_COMPILER_CACHE_MODE": "enable", ...}``).

    On hardware they go to aclSetCompileopt / ge options. Here they are checked as torch_npu
    checks them (a dict of option names torch_npu knows; the values of ACL_PRECISION_MODE,
    ACL_OP_SELECT_IMPL_MODE, ACL_OP_DEBUG_LEVEL, ACL_OP_COMPILER_CACHE_MODE from their lists,
    ACL_AICORE_NUM from 1 to 32; values become strings, as CANN takes them) and kept for
    :func:`get_option`. ``MM_BMM_ND_ENABLE`` ("enable" / "disable") also sets
    :func:`set_mm_bmm_format_nd`, as in torch_npu. Nothing is applied before every entry passed.
    """
    if not isinstance(option, dict):
        raise TypeError(f"npu option must be a dict, got {type(option).__name__}\n" + pta_error(ErrCode.TYPE))
    checked = {}
    for key, value in option.items():
        if not isinstance(key, str):
            raise TypeError(f"npu option keys must be str, got {key!r}\n" + pta_error(ErrCode.TYPE))
        if key not in _KNOWN_OPTIONS:
            raise RuntimeError(f"invalid npu option name:{key}\n" + pta_error(ErrCode.PARAM))
        text = str(value)
        if key in _OPTION_VALUES and text not in _OPTION_VALUES[key]:
            raise ValueError(f"value of {key} should be in {_OPTION_VALUES[key]} but got {text}\n"
                             + pta_error(ErrCode.PARAM))
        if key == "ACL_AICORE_NUM" and not (text.isdigit() and 1 <= int(text) <= 32):
            raise ValueError(f"value of ACL_AICORE_NUM should be an integer from 1 to 32 but got {text}\n"
                             + pta_error(ErrCode.PARAM))
        checked[key] = text
    if checked.get("MM_BMM_ND_ENABLE") in ("enable", "disable"):
        set_mm_bmm_format_nd(checked["MM_BMM_ND_ENABLE"] == "enable")
    _options.update(checked)


def get_option(key: str) -> str | None:
    """Return an option recorded by :func:`set_option` (None if never set)."""
    return _options.get(key)


def set_aoe(dump_path: str) -> None:
    """Enable AOE (Ascend Optimization Engine) tuning dumps into ``dump_path``.

    On hardware, operators run while AOE is on are dumped for offline tuning. The
    simulator has no AOE; the directory is created as torch_npu does and recorded.
    """
    import os

    if not isinstance(dump_path, str) or not dump_path:
        raise TypeError("dump_path must be a non-empty str\n" + pta_error(ErrCode.TYPE))
    os.makedirs(dump_path, exist_ok=True)
    _state["aoe_dump_path"] = os.path.realpath(dump_path)


def set_compile_mode(jit_compile: bool = False) -> None:
    """Choose online operator compilation (True) or prebuilt binary kernels (False) on hardware.

    The simulator always compiles each op through npu_mlir on first use and caches it;
    the choice is recorded for :func:`is_jit_compile_false`.
    """
    _state["jit_compile"] = _check_bool("jit_compile", jit_compile)


def is_jit_compile_false() -> bool:
    """Whether :func:`set_compile_mode` selected binary kernels (``jit_compile=False``, the default)."""
    return not _state["jit_compile"]


def set_mm_bmm_format_nd(is_nd: bool = True) -> None:
    """On hardware: keep matmul / bmm operands in ND (True) instead of casting them to FRACTAL_NZ.

    Recorded only: the simulator's compiler places the NZ conversion inside the cube
    kernel's copy-in either way, and results are always ND.
    """
    _state["mm_bmm_nd"] = _check_bool("is_nd", is_nd)


def get_mm_bmm_format_nd() -> bool:
    """The value of :func:`set_mm_bmm_format_nd` (default True)."""
    return _state["mm_bmm_nd"]


def set_task_queue_enable(enable: int | bool) -> None:
    """torch_npu's TASK_QUEUE_ENABLE (0 off, 1 one-level, 2 two-level launch pipeline).

    On hardware a queue thread issues ops asynchronously. The simulator's launches are
    always asynchronous stream tasks (``ASCEND_LAUNCH_BLOCKING=1`` makes them synchronous);
    the level is validated and recorded.
    """
    if isinstance(enable, bool):
        enable = int(enable)
    if not isinstance(enable, int) or enable not in (0, 1, 2):
        raise ValueError(f"task queue level must be 0, 1 or 2, got {enable!r}\n" + pta_error(ErrCode.VALUE))
    _state["task_queue"] = enable


def get_task_queue_enable() -> int:
    """The level set by :func:`set_task_queue_enable` (default 2)."""
    return _state["task_queue"]


def use_compatible_impl(is_enable: bool) -> None:
    """On hardware: run ops with torch's reference semantics where torch_npu's fast ones differ.

    The simulator's ops follow torch's semantics already (tests compare them with CPU
    PyTorch); the switch is recorded for :func:`are_compatible_impl_enabled`.
    """
    _state["compatible_impl"] = _check_bool("is_enable", is_enable)


def are_compatible_impl_enabled() -> bool:
    """The value of :func:`use_compatible_impl` (default False)."""
    return _state["compatible_impl"]
