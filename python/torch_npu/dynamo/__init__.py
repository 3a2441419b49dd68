"""torch.compile backends for npu tensors: "npu-mlir" (backend.py) compiles whole graphs with npu_mlir."""
