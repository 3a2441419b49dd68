"""torch.distributed on npu: the ``hccl`` process-group backend and torch_npu's extra collectives.

``import torch_npu`` registers ``hccl`` and ``lccl`` (ranks on one host, through shared
device memory) for the ``npu`` device, so ``init_process_group("hccl")``, ``"lccl"`` and
mixed specs such as ``"cpu:gloo,npu:lccl"`` work.
Each rank communicates on ``npu:LOCAL_RANK`` (the current device when ``LOCAL_RANK`` is unset).
"""
from torch_npu.distributed.count_matrix_all_to_all import all_to_all_vc
from torch_npu.distributed.hccl_backend import is_hccl_available, register_hccl_backend
from torch_npu.distributed.lccl_backend import register_lccl_backend
from torch_npu.distributed.reinit import reinit_process_group
from torch_npu.distributed.uneven import all_gather_into_tensor_uneven, reduce_scatter_tensor_uneven

__all__ = [
    "all_gather_into_tensor_uneven",
    "all_to_all_vc",
    "is_hccl_available",
    "reduce_scatter_tensor_uneven",
    "reinit_process_group",
]

register_hccl_backend()
register_lccl_backend()
