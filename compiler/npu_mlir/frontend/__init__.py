"""torch -> MLIR: single aten ops (eager) and FX graphs (torch.compile) as linalg-on-tensors modules.

The torch_import names load on first use: the user's process imports references/ and
decompositions/ (plain torch) and must not pay for loading torch-mlir.
"""

from typing import Any

__all__ = ["FrontendError", "ImportedGraph", "import_aten_op", "import_fx_graph"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from npu_mlir.frontend import torch_import

        return getattr(torch_import, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
