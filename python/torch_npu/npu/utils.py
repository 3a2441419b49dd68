"""``torch_npu.npu.utils``: chip capability queries torch_npu's tests use."""

from torch_npu.npu.overflow import (
    clear_npu_overflow_flag,
    get_npu_overflow_flag,
    is_force_overflow_check,
    is_support_inf_nan,
    npu_check_overflow,
)

__all__ = [
    "clear_npu_overflow_flag", "get_cann_version", "get_npu_overflow_flag", "is_force_overflow_check",
    "is_support_inf_nan", "npu_check_overflow",
]

_CANN_MODULES = ("CANN", "RUNTIME", "COMPILER", "HCCL", "TOOLKIT", "OPP", "OPP_KERNEL", "DRIVER")


def get_cann_version(module: str = "CANN") -> str:
    """torch_npu's component version query; "" for an unknown module, as torch_npu.

    Every component of this stack is the simulator and its compiler, so every known
    module answers :func:`torch_npu.utils.collect_env.get_cann_version`.
    """
    if module not in _CANN_MODULES:
        return ""
    from torch_npu.utils.collect_env import get_cann_version as simulator_version

    return simulator_version()
