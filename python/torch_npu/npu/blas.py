"""``torch.npu.current_blas_handle``: torch.cuda's name, with torch_npu's answer."""

import warnings

__all__ = ["current_blas_handle"]


def current_blas_handle() -> None:
    r"""torch.cuda returns the current cuBLAS handle here. NPU matmuls are compiled cube
    kernels with no BLAS library handle, so, as in torch_npu, this warns and returns ``None``."""
    warnings.warn("NPU does not use blas handle.", stacklevel=2)
    return None
