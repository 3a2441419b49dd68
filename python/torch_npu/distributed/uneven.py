"""Collectives whose ranks hold different amounts of data (torch_npu extras).

Both split along dim 0 and run as one rooted collective per rank on the hccl
backend, which queues them in order, so the last one finishing means all did.
"""
import torch
import torch.distributed as dist

from torch_npu.utils.error_code import ErrCode, SubModule, npu_error


class WorkList(dist.Work):
    """One Work over several queued operations: waits for all, reports the first error."""

    def __init__(self, works: list[dist.Work]) -> None:
        super().__init__()
        self.works = works

    def wait(self, timeout=None) -> bool:
        for work in self.works:
            work.wait() if timeout is None else work.wait(timeout)
        return True

    def is_completed(self) -> bool:
        return all(work.is_completed() for work in self.works)

    def get_future(self) -> torch.futures.Future:
        return torch.futures.collect_all([work.get_future() for work in self.works])


def split_sizes(total: int, sizes: list[int] | None, world: int, what: str) -> list[int]:
    """Return the per-rank dim-0 sizes: the given list, or an even split of ``total``."""
    if sizes is None:
        if total % world:
            raise ValueError(
                f"{what}: dim 0 ({total}) does not split evenly over {world} ranks; pass the split sizes.\n"
                + npu_error(SubModule.DIST, ErrCode.PARAM)
            )
        return [total // world] * world
    if len(sizes) != world or sum(sizes) != total or min(sizes) < 0:
        raise ValueError(
            f"{what}: split sizes {list(sizes)} must have one non-negative entry per rank ({world}) "
            f"summing to dim 0 ({total}).\n" + npu_error(SubModule.DIST, ErrCode.PARAM)
        )
    return list(sizes)


def finish(works: list[dist.Work], async_op: bool) -> WorkList | None:
    work = WorkList(works)
    if async_op:
        return work
    work.wait()
    return None


def reduce_scatter_tensor_uneven(
    output: torch.Tensor,
    input: torch.Tensor,
    input_split_sizes: list[int] | None = None,
    op: dist.ReduceOp.RedOpType = dist.ReduceOp.SUM,
    group: dist.ProcessGroup | None = None,
    async_op: bool = False,
) -> WorkList | None:
    """Reduce ``input`` over ranks and leave chunk ``rank`` (dim-0 sizes ``input_split_sizes``) in ``output``.

    ``input_split_sizes`` defaults to an even split. Returns at once with a work handle
    when ``async_op`` is True; otherwise waits for the result.
    """
    world, rank = dist.get_world_size(group), dist.get_rank(group)
    sizes = split_sizes(input.size(0), input_split_sizes, world, "reduce_scatter_tensor_uneven")
    if output.shape != (sizes[rank], *input.shape[1:]):
        raise ValueError(
            f"reduce_scatter_tensor_uneven: output has shape {tuple(output.shape)}, expected "
            f"{(sizes[rank], *input.shape[1:])}.\n" + npu_error(SubModule.DIST, ErrCode.PARAM)
        )
    # A reduce may use non-root buffers as scratch: reduce a copy, never the caller's input.
    chunks = list(input.clone().split(sizes))
    output.copy_(chunks[rank])
    chunks[rank] = output
    works = [
        dist.reduce(chunk, op=op, group=group, async_op=True, group_dst=root)
        for root, chunk in enumerate(chunks)
    ]
    return finish(works, async_op)


def all_gather_into_tensor_uneven(
    output: torch.Tensor,
    input: torch.Tensor,
    output_split_sizes: list[int] | None = None,
    group: dist.ProcessGroup | None = None,
    async_op: bool = False,
) -> WorkList | None:
    """Concatenate every rank's ``input`` along dim 0 into ``output`` (rank r's part has ``output_split_sizes[r]`` rows).

    ``output_split_sizes`` defaults to an even split. Returns at once with a work handle
    when ``async_op`` is True; otherwise waits for the result.
    """
    world, rank = dist.get_world_size(group), dist.get_rank(group)
    sizes = split_sizes(output.size(0), output_split_sizes, world, "all_gather_into_tensor_uneven")
    if input.shape != (sizes[rank], *output.shape[1:]):
        raise ValueError(
            f"all_gather_into_tensor_uneven: input has shape {tuple(input.shape)}, expected "
            f"{(sizes[rank], *output.shape[1:])}.\n" + npu_error(SubModule.DIST, ErrCode.PARAM)
        )
    chunks = output.split(sizes)
    chunks[rank].copy_(input)
    works = [
        dist.broadcast(chunk, group=group, async_op=True, group_src=root)
        for root, chunk in enumerate(chunks)
    ]
    return finish(works, async_op)
