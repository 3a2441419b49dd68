"""reinit_process_group: rebuild a group's transport, e.g. after a collective failed."""
import torch
import torch.distributed as dist

from torch_npu.distributed.hccl_backend import build_transport, transports
from torch_npu.utils.error_code import ErrCode, SubModule, npu_error


def reinit_process_group(group: dist.ProcessGroup | None = None, rebuild_link: bool = True) -> dist.ProcessGroup:
    """Rebuild the hccl transport of ``group`` (default: the world group) and return the group.

    Every rank of the group must call it (it rendezvouses through the group's store).
    Operations already queued finish first. With ``rebuild_link=False`` it only checks
    that ``group`` has an hccl backend. Blocks until the new links are up.
    """
    group = group if group is not None else dist.group.WORLD
    if group is None:
        raise RuntimeError(
            "reinit_process_group: no default process group; call init_process_group first.\n"
            + npu_error(SubModule.DIST, ErrCode.NOT_FOUND)
        )
    name = dist.distributed_c10d._get_process_group_name(group)
    state = transports.get(name)
    if state is None:
        raise RuntimeError(
            f"reinit_process_group: group {name!r} has no hccl backend; create it with backend='hccl'.\n"
            + npu_error(SubModule.DIST, ErrCode.PARAM)
        )
    if rebuild_link:
        state.generation += 1
        group._get_backend(torch.device("npu"))._set_transport(build_transport(state))
    return group
