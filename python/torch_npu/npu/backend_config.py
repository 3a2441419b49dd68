"""``torch.npu.matmul`` / ``torch.npu.conv``: torch_npu's cube precision switches.

``allow_hf32`` lets Ascend cube units compute float32 matmuls / convolutions in HF32
(a 1+8+10-bit format), trading precision for speed. The simulator records the flag and
reports it, but computes float32 in float32 either way.
"""

from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["conv", "matmul"]


class _CubeConfig:
    """One cube op family's flags (``allow_hf32``)."""

    def __init__(self, name: str, allow_hf32: bool):
        self._name = name
        self._allow_hf32 = allow_hf32

    @property
    def allow_hf32(self) -> bool:
        """Whether float32 may run in HF32 on hardware (recorded; ignored by the simulator)."""
        return self._allow_hf32

    @allow_hf32.setter
    def allow_hf32(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"allow_hf32 must be a bool, got {type(value).__name__}\n" + pta_error(ErrCode.TYPE))
        self._allow_hf32 = value

    def __repr__(self) -> str:
        return f"torch.npu.{self._name}(allow_hf32={self._allow_hf32})"


# torch_npu's defaults: HF32 off for matmul, on for convolution.
matmul = _CubeConfig("matmul", False)
conv = _CubeConfig("conv", True)
