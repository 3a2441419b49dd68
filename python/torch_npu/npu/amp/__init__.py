"""torch.npu.amp: automatic mixed precision for the NPU, as torch.cuda.amp."""

from torch_npu.npu.amp.autocast_mode import GradScaler, autocast, get_amp_supported_dtype, is_bf16_supported

__all__ = ["GradScaler", "autocast", "get_amp_supported_dtype", "is_bf16_supported"]
