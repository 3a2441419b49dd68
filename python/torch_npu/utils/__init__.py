"""Python-side helpers shared by torch_npu's modules: error codes, combined tensors."""

from torch_npu.utils.combined_tensors import get_part_combined_tensor, is_combined_tensor_valid, npu_combine_tensors
from torch_npu.utils.error_code import ErrCode, SubModule, npu_error, pta_error

__all__ = [
    "ErrCode",
    "SubModule",
    "get_part_combined_tensor",
    "is_combined_tensor_valid",
    "npu_combine_tensors",
    "npu_error",
    "pta_error",
]
