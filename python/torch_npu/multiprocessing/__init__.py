"""torch.multiprocessing for npu tensors: queues, pipes and ``spawn`` arguments share device memory.

``import torch_npu`` registers the reductions, so an npu tensor (or storage, or an
``Event(interprocess=True)``) put on a ``torch.multiprocessing`` queue arrives in the other
process as a view of the *same* device memory, as CUDA tensors do: no copy, writes on one
side are seen on the other once the writer synchronized. The sender must keep the tensor
alive while receivers use it; its block is freed only after every receiver released it
(:func:`torch.npu.ipc_collect` frees blocks whose receivers let go).
"""
from torch_npu.multiprocessing.reductions import init_reductions

__all__ = ["init_reductions"]
