"""torch_npu: PyTorch on (simulated) Ascend NPUs.

``import torch_npu`` registers the ``npu`` device with PyTorch: tensors and modules
gain ``.npu()`` and ``.is_npu``, ``torch.device("npu:1")`` and ``device="npu"``
work, and ``torch.npu`` is this package's :mod:`torch_npu.npu`.
"""

import torch

# Loading the extension registers the allocator, device guard, hooks and kernels
# for PrivateUse1; everything below only names them.
from torch_npu import _C  # noqa: F401

torch.utils.rename_privateuse1_backend("npu")

from torch_npu import npu  # noqa: E402

# Mandatory: torch's lazy device init imports torch.npu and calls its _lazy_init.
torch._register_device_module("npu", npu)
torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_storage=True)

from torch_npu import distributed  # noqa: E402,F401  (registers the "hccl" c10d backend)
from torch_npu import storage_formats  # noqa: E402
from torch_npu.storage_formats import *  # noqa: E402,F401,F403  (npu_format_cast, Format, ... as in torch_npu)
from torch_npu import ops  # noqa: E402  (CPU / fake / autograd kernels of torch.ops.npu.*)
from torch_npu.ops import *  # noqa: E402,F401,F403  (torch_npu.npu_swiglu, ... as in torch_npu)
from torch_npu import profiler  # noqa: E402,F401  (torch_npu.profiler.profile, ...)
from torch_npu import optim  # noqa: E402,F401  (torch_npu.optim.NpuFusedAdamW, ...)
from torch_npu import multiprocessing as _multiprocessing  # noqa: E402  (npu tensors through torch.multiprocessing)

_multiprocessing.init_reductions()
from torch_npu.utils.combined_tensors import npu_change_data_ptr  # noqa: E402
from torch_npu.npu.stream_uses import erase_stream  # noqa: E402

__all__ = ["npu", "erase_stream", "npu_change_data_ptr", "optim", *ops.__all__, *storage_formats.__all__]
