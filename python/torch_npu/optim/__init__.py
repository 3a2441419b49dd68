"""torch_npu.optim: torch_npu's fused optimizers, stepping parameters combined into one buffer per dtype."""

from torch_npu.optim.npu_fused_adadelta import NpuFusedAdadelta
from torch_npu.optim.npu_fused_adam import NpuFusedAdam, NpuFusedAdamW
from torch_npu.optim.npu_fused_adamp import NpuFusedAdamP
from torch_npu.optim.npu_fused_bert_adam import NpuFusedBertAdam
from torch_npu.optim.npu_fused_lamb import NpuFusedLamb
from torch_npu.optim.npu_fused_optim_base import NpuFusedOptimizerBase
from torch_npu.optim.npu_fused_rmsprop import NpuFusedRMSprop, NpuFusedRMSpropTF
from torch_npu.optim.npu_fused_sgd import NpuFusedSGD

__all__ = [
    "NpuFusedAdadelta",
    "NpuFusedAdam",
    "NpuFusedAdamW",
    "NpuFusedAdamP",
    "NpuFusedBertAdam",
    "NpuFusedLamb",
    "NpuFusedOptimizerBase",
    "NpuFusedRMSprop",
    "NpuFusedRMSpropTF",
    "NpuFusedSGD",
]
