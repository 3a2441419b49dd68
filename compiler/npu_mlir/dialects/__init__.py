"""MLIR dialects defined by npu_mlir (Python, on torch_mlir.dialects.ext)."""
