"""torch.npu.amp: automatic mixed precision for the NPU, as torch.cuda.amp."""

from torch_npu.npu.amp.autocast_mode import (
    autocast,
    custom_bwd,
    custom_fwd,
    get_amp_supported_dtype,
    get_autocast_dtype,
    is_autocast_enabled,
    is_bf16_supported,
    set_autocast_dtype,
    set_autocast_enabled,
)
from torch_npu.npu.amp.grad_scaler import GradScaler

__all__ = [
    "GradScaler",
    "autocast",
    "custom_bwd",
    "custom_fwd",
    "get_amp_supported_dtype",
    "get_autocast_dtype",
    "is_autocast_enabled",
    "is_bf16_supported",
    "set_autocast_dtype",
    "set_autocast_enabled",
]
