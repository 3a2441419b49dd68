"""torch -> MLIR: single aten ops (eager) and FX graphs (torch.compile) as linalg-on-tensors modules."""

from npu_mlir.frontend.torch_import import FrontendError, ImportedGraph, import_aten_op, import_fx_graph

__all__ = ["FrontendError", "ImportedGraph", "import_aten_op", "import_fx_graph"]
