"""``torch_npu.npu.utils``: chip capability queries torch_npu's tests use."""

from torch_npu.npu.devices import get_device_name

__all__ = ["get_cann_version", "is_support_inf_nan"]

_CANN_MODULES = ("CANN", "RUNTIME", "COMPILER", "HCCL", "TOOLKIT", "OPP", "OPP_KERNEL", "DRIVER")


def is_support_inf_nan() -> bool:
    """Whether kernels propagate inf/nan (IEEE mode) rather than saturate: True on Ascend910B.

    The simulated 910B computes in IEEE arithmetic, so overflows give inf and 0/0 gives nan.
    """
    return get_device_name().startswith("Ascend910B")


def get_cann_version(module: str = "CANN") -> str:
    """torch_npu's component version query; "" for an unknown module, as torch_npu.

    Every component of this stack is the simulator and its compiler, so every known
    module answers :func:`torch_npu.utils.collect_env.get_cann_version`.
    """
    if module not in _CANN_MODULES:
        return ""
    from torch_npu.utils.collect_env import get_cann_version as simulator_version

    return simulator_version()
