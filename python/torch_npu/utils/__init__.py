"""Python-side helpers shared by torch_npu's modules: error codes."""

from torch_npu.utils.error_code import ErrCode, SubModule, npu_error, pta_error

__all__ = ["ErrCode", "SubModule", "npu_error", "pta_error"]
