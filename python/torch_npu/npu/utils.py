"""``torch_npu.npu.utils``: chip capability queries torch_npu's tests use."""

from torch_npu.npu.amp.autocast_mode import is_bf16_supported
from torch_npu.npu.devices import get_device_name
from torch_npu.npu.overflow import (
    clear_npu_overflow_flag,
    get_npu_overflow_flag,
    is_force_overflow_check,
    is_support_inf_nan,
    npu_check_overflow,
)

__all__ = [
    "clear_npu_overflow_flag", "get_cann_version", "get_npu_overflow_flag", "get_soc_version", "is_bf16_supported",
    "is_force_overflow_check", "is_support_inf_nan", "npu_check_overflow",
]

# torch_npu's c10_npu::SocVersion numbers of the 910B chips (UnsupportedSocVersion is -1).
_SOC_VERSIONS = {"Ascend910B1": 220, "Ascend910B2": 221, "Ascend910B2C": 222, "Ascend910B3": 223, "Ascend910B4": 224}

_CANN_MODULES = ("CANN", "RUNTIME", "COMPILER", "HCCL", "TOOLKIT", "OPP", "OPP_KERNEL", "DRIVER")


def get_soc_version() -> int:
    """torch_npu's SocVersion number of the chip: 220 for the simulated Ascend910B1 (tests compare
    it, e.g. ``>= 220`` for the 910B family and later)."""
    return _SOC_VERSIONS.get(get_device_name(), -1)


def get_cann_version(module: str = "CANN") -> str:
    """torch_npu's component version query; "" for an unknown module, as torch_npu.

    Every component of this stack is the simulator and its compiler, so every known
    module answers :func:`torch_npu.utils.collect_env.get_cann_version`.
    """
    if module not in _CANN_MODULES:
        return ""
    from torch_npu.utils.collect_env import get_cann_version as simulator_version

    return simulator_version()
