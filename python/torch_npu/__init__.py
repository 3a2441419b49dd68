"""torch_npu: PyTorch on (simulated) Ascend NPUs."""
