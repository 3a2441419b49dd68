"""Registration with c10d (the mixed "cpu:gloo,npu:hccl" spec runs in test_collectives)."""
import torch
import torch.distributed as dist


def test_hccl_registered_for_npu() -> None:
    import torch_npu
    import torch_npu.distributed as npu_dist

    assert npu_dist.is_hccl_available()
    assert dist.Backend.HCCL == "hccl"
    assert dist.Backend.default_device_backend_map["npu"] == "hccl"
    assert dist.Backend.backend_capability["hccl"] == ["npu"]
    # A C++ subclass of torch's own c10d Backend binding, so c10d takes it as a backend.
    assert issubclass(torch_npu._C._distributed.ProcessGroupHCCL, torch._C._distributed_c10d.Backend)
