"""``torch_npu.distributed.all_to_all_vc``: an all-to-all whose per-pair counts every rank
already knows, as HCCL's alltoallvc.

Where ``all_to_all_single`` needs each rank's own input and output split sizes,
alltoallvc takes the whole send-count matrix on every rank (HCCL then needs no exchange of
counts): ``send_count_matrix[i * world_size + j]`` is the number of dim-0 rows rank ``i``
sends rank ``j``. Rank ``r`` sends row ``r`` of the matrix and receives column ``r``, so it
runs as one hccl ``alltoall_base`` with those splits.
"""
from collections.abc import Sequence

import torch
import torch.distributed as dist

from torch_npu.utils.error_code import ErrCode, SubModule, npu_error

__all__ = ["all_to_all_vc"]


def _counts(send_count_matrix: Sequence[int] | torch.Tensor, world: int) -> list[int]:
    if isinstance(send_count_matrix, torch.Tensor):
        if send_count_matrix.dtype.is_floating_point or send_count_matrix.dtype.is_complex:
            raise TypeError("all_to_all_vc: send_count_matrix must hold integers\n"
                            + npu_error(SubModule.DIST, ErrCode.TYPE))
        counts = [int(c) for c in send_count_matrix.reshape(-1).tolist()]
    elif isinstance(send_count_matrix, Sequence) and all(
            isinstance(c, int) and not isinstance(c, bool) for c in send_count_matrix):
        counts = list(send_count_matrix)
    else:
        raise TypeError("all_to_all_vc: send_count_matrix must be a list of ints or an integer Tensor\n"
                        + npu_error(SubModule.DIST, ErrCode.TYPE))
    if len(counts) != world * world or min(counts, default=0) < 0:
        raise ValueError(f"all_to_all_vc: send_count_matrix needs world_size**2 = {world * world} non-negative "
                         f"counts (entry i*world_size+j: rows rank i sends rank j), got {len(counts)}\n"
                         + npu_error(SubModule.DIST, ErrCode.PARAM))
    return counts


def all_to_all_vc(output: torch.Tensor, input: torch.Tensor, send_count_matrix: Sequence[int] | torch.Tensor,
                  group: dist.ProcessGroup | None = None, async_op: bool = False) -> dist.Work | None:
    r"""Scatter ``input``'s dim-0 rows to every rank and gather theirs into ``output``.

    Args:
        output (Tensor): receives, in rank order, the rows each rank sends this one; its dim 0
            is the sum of this rank's column of the matrix.
        input (Tensor): the rows to send, in rank order; its dim 0 is the sum of this rank's row.
        send_count_matrix (list[int] or Tensor): world_size**2 counts, the same on every rank.
        group (ProcessGroup, optional): the group (default: the world).
        async_op (bool): return the Work instead of waiting.
    """
    if not isinstance(output, torch.Tensor) or not isinstance(input, torch.Tensor):
        raise TypeError("all_to_all_vc: output and input must be tensors\n" + npu_error(SubModule.DIST, ErrCode.TYPE))
    world = dist.get_world_size(group)
    rank = dist.get_rank(group)
    counts = _counts(send_count_matrix, world)
    send = counts[rank * world:(rank + 1) * world]
    receive = [counts[i * world + rank] for i in range(world)]
    if sum(send) != input.shape[0] or sum(receive) != output.shape[0]:
        raise ValueError(f"all_to_all_vc: rank {rank} sends {sum(send)} rows and receives {sum(receive)} by the "
                         f"matrix, but input has {input.shape[0]} and output {output.shape[0]}\n"
                         + npu_error(SubModule.DIST, ErrCode.PARAM))
    return dist.all_to_all_single(output, input, output_split_sizes=receive, input_split_sizes=send,
                                  group=group, async_op=async_op)
