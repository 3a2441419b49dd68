"""torch.npu.config: process-wide switches, as in torch_npu.

``allow_internal_format`` (default False, as torch_npu on Atlas A2): whether tensors may be stored
in internal formats (NC1HWC0, FRACTAL_Z, FRACTAL_NZ). While False, ``npu_format_cast`` and
``empty_with_format`` asked for one give the base format instead, with a one-time warning.
"""

import sys
import types

from torch_npu import _C
from torch_npu.utils.error_code import ErrCode, pta_error

__all__ = ["allow_internal_format"]


class _ConfigModule(types.ModuleType):
    @property
    def allow_internal_format(self) -> bool:
        return _C._npu_get_allow_internal_format()

    @allow_internal_format.setter
    def allow_internal_format(self, allow: bool) -> None:
        if not isinstance(allow, bool):
            raise TypeError(f"allow_internal_format must be a bool, got {allow!r}\n{pta_error(ErrCode.TYPE)}")
        _C._npu_set_allow_internal_format(allow)


sys.modules[__name__].__class__ = _ConfigModule
