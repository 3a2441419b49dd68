"""Creates ProcessGroupHCCL for c10d: a Gloo transport built here, wrapped by the C++ backend."""
import os
from dataclasses import dataclass
from datetime import timedelta

import torch
import torch.distributed as dist

from torch_npu._C._distributed import ProcessGroupHCCL
from torch_npu.utils.error_code import ErrCode, SubModule, npu_error

BACKEND_NAME = "hccl"


@dataclass
class GroupTransport:
    """What reinit_process_group needs to build a fresh transport for a group."""

    store: dist.Store
    rank: int
    size: int
    timeout: timedelta
    generation: int = 0


# Keyed by c10d group name: c10d keeps the backend object in C++, so the Python wrapper
# we return may not survive to carry attributes.
transports: dict[str, GroupTransport] = {}


def rank_device() -> int:
    """Return the npu index this rank communicates on: LOCAL_RANK, else the current device."""
    local_rank = os.environ.get("LOCAL_RANK")
    if local_rank is None:
        return torch.accelerator.current_device_index()
    device = int(local_rank)
    count = torch.accelerator.device_count()
    if not 0 <= device < count:
        raise RuntimeError(
            f"LOCAL_RANK={device} but only {count} npu devices are visible: start at most {count} processes "
            "per node (torchrun --nproc-per-node) or raise NPU_SIM_DEVICE_COUNT.\n"
            + npu_error(SubModule.DIST, ErrCode.VALUE)
        )
    return device


def build_transport(group: GroupTransport) -> dist.ProcessGroupGloo:
    """Build the Gloo transport under its own store prefix (a c10d gloo backend may share the store)."""
    prefix = dist.PrefixStore(f"hccl/{group.generation}", group.store)
    return dist.ProcessGroupGloo(prefix, group.rank, group.size, group.timeout)


def create_hccl_backend(opts, backend_options) -> ProcessGroupHCCL:
    """Build the backend c10d asks for in init_process_group / new_group (extended API)."""
    device = rank_device()
    torch.accelerator.set_device_index(device)
    group = GroupTransport(opts.store, opts.group_rank, opts.group_size, opts.timeout)
    transports[opts.group_id] = group
    return ProcessGroupHCCL(build_transport(group), group.rank, group.size, device, group.timeout)


def register_hccl_backend() -> None:
    """Register ``hccl`` for the npu device with c10d (once per process)."""
    if BACKEND_NAME.upper() not in dist.Backend._plugins:
        dist.Backend.register_backend(BACKEND_NAME, create_hccl_backend, extended_api=True, devices=["npu"])


def is_hccl_available() -> bool:
    """Return True when the hccl backend is registered with torch.distributed."""
    return dist.is_available() and BACKEND_NAME.upper() in dist.Backend._plugins
