"""torch_npu's own fused ops (torch.ops.npu.*), with autograd, as torch_npu names them.

Each runs as one compiled kernel per call on NPU tensors; how they compile is described in
npu_mlir/frontend/references/__init__.py. They also run on CPU tensors (their plain-torch reference).
"""

from torch_npu.ops import reference_kernels
from torch_npu.ops.fusion_attention import npu_fusion_attention, npu_fusion_attention_grad
from torch_npu.ops.rms_norm import npu_rms_norm
from torch_npu.ops.rotary_mul import npu_rotary_mul
from torch_npu.ops.swiglu import npu_swiglu

reference_kernels.register_all()

__all__ = ["npu_fusion_attention", "npu_fusion_attention_grad", "npu_rms_norm", "npu_rotary_mul", "npu_swiglu"]
