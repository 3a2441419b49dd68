"""Per-rank bodies of the collective tests: each check runs one collective on npu
tensors and compares with the value computed on CPU from every rank's input; the same
checks run on the hccl and the lccl backend."""
import re
import time
import traceback
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.testing import assert_close

import torch_npu
import torch_npu.distributed as npu_dist

DTYPES = [torch.float32, torch.bfloat16, torch.int32]
# Far above any check's run time: on a host loaded past 15 a rank can stall for a minute (one
# 4-rank run failed a collective under such load), and a passing run never waits for it.
GROUP_TIMEOUT = timedelta(seconds=180)
SHAPES = [(5,), (2, 3, 8)]


def rank_input(rank: int, shape: tuple, dtype: torch.dtype) -> torch.Tensor:
    """Small integers (exact in every dtype, products included) that differ per rank."""
    n = torch.Size(shape).numel()
    return ((torch.arange(n) % 3) + rank + 1).reshape(shape).to(dtype)


def npu(t: torch.Tensor) -> torch.Tensor:
    return t.to(f"npu:{torch.npu.current_device()}")


def every(world: int, shape: tuple, dtype: torch.dtype) -> list[torch.Tensor]:
    return [rank_input(r, shape, dtype) for r in range(world)]


def cases():
    for dtype in DTYPES:
        for shape in SHAPES:
            yield shape, dtype


REDUCTIONS = {
    dist.ReduceOp.SUM: lambda ts: torch.stack(ts).sum(0).to(ts[0].dtype),
    dist.ReduceOp.PRODUCT: lambda ts: torch.stack(ts).prod(0).to(ts[0].dtype),
    dist.ReduceOp.MIN: lambda ts: torch.stack(ts).amin(0),
    dist.ReduceOp.MAX: lambda ts: torch.stack(ts).amax(0),
    dist.ReduceOp.AVG: lambda ts: torch.stack(ts).double().mean(0).to(ts[0].dtype),
}


def check_all_reduce(rank, world):
    for shape, dtype in cases():
        for op, reference in REDUCTIONS.items():
            if op == dist.ReduceOp.AVG and not dtype.is_floating_point:
                continue
            t = npu(rank_input(rank, shape, dtype))
            dist.all_reduce(t, op=op)
            assert_close(t.cpu(), reference(every(world, shape, dtype)), msg=f"{op} {dtype} {shape}")


def check_broadcast(rank, world):
    for shape, dtype in cases():
        t = npu(rank_input(rank, shape, dtype))
        dist.broadcast(t, src=world - 1)
        assert_close(t.cpu(), rank_input(world - 1, shape, dtype))


def check_reduce(rank, world):
    for shape, dtype in cases():
        t = npu(rank_input(rank, shape, dtype))
        dist.reduce(t, dst=1, op=dist.ReduceOp.MAX)
        if rank == 1:
            assert_close(t.cpu(), REDUCTIONS[dist.ReduceOp.MAX](every(world, shape, dtype)))


def check_all_gather(rank, world):
    for shape, dtype in cases():
        outs = [npu(torch.zeros(shape, dtype=dtype)) for _ in range(world)]
        dist.all_gather(outs, npu(rank_input(rank, shape, dtype)))
        for got, want in zip(outs, every(world, shape, dtype)):
            assert_close(got.cpu(), want)


def check_all_gather_into_tensor(rank, world):
    for shape, dtype in cases():
        out = npu(torch.zeros((world * shape[0], *shape[1:]), dtype=dtype))
        dist.all_gather_into_tensor(out, npu(rank_input(rank, shape, dtype)))
        assert_close(out.cpu(), torch.cat(every(world, shape, dtype)))


def check_reduce_scatter(rank, world):
    for shape, dtype in cases():
        ins = [npu(rank_input(rank + j, shape, dtype)) for j in range(world)]
        out = npu(torch.zeros(shape, dtype=dtype))
        dist.reduce_scatter(out, ins)
        want = sum(rank_input(r + rank, shape, dtype) for r in range(world))
        assert_close(out.cpu(), want.to(dtype))


def check_reduce_scatter_tensor(rank, world):
    for shape, dtype in cases():
        full = [torch.cat([rank_input(r + j, shape, dtype) for j in range(world)]) for r in range(world)]
        out = npu(torch.zeros(shape, dtype=dtype))
        dist.reduce_scatter_tensor(out, npu(full[rank]))
        want = torch.stack(full).sum(0).to(dtype).split(shape[0])[rank]
        assert_close(out.cpu(), want)


def check_all_to_all(rank, world):
    for shape, dtype in cases():
        ins = [npu(rank_input(rank * world + j, shape, dtype)) for j in range(world)]
        outs = [npu(torch.zeros(shape, dtype=dtype)) for _ in range(world)]
        dist.all_to_all(outs, ins)
        for src, got in enumerate(outs):
            assert_close(got.cpu(), rank_input(src * world + rank, shape, dtype))


def check_all_to_all_single_splits(rank, world):
    # Rank r sends j + 1 rows to rank j, so it receives r + 1 rows from each rank.
    for dtype in DTYPES:
        def block(src, dst):
            return torch.full((dst + 1, 3), src * 10 + dst, dtype=dtype)

        inp = npu(torch.cat([block(rank, j) for j in range(world)]))
        out = npu(torch.zeros((world * (rank + 1), 3), dtype=dtype))
        dist.all_to_all_single(out, inp, output_split_sizes=[rank + 1] * world,
                               input_split_sizes=[j + 1 for j in range(world)])
        assert_close(out.cpu(), torch.cat([block(src, rank) for src in range(world)]))
        even = npu(rank_input(rank, (world * 2, 3), dtype))
        got = npu(torch.zeros_like(even.cpu()))
        dist.all_to_all_single(got, even)
        want = torch.cat([rank_input(src, (world * 2, 3), dtype)[2 * rank:2 * rank + 2] for src in range(world)])
        assert_close(got.cpu(), want)


def check_gather(rank, world):
    for shape, dtype in cases():
        outs = [npu(torch.zeros(shape, dtype=dtype)) for _ in range(world)] if rank == 0 else None
        dist.gather(npu(rank_input(rank, shape, dtype)), outs, dst=0)
        if rank == 0:
            for got, want in zip(outs, every(world, shape, dtype)):
                assert_close(got.cpu(), want)


def check_scatter(rank, world):
    for shape, dtype in cases():
        ins = [npu(t) for t in every(world, shape, dtype)] if rank == world - 1 else None
        out = npu(torch.zeros(shape, dtype=dtype))
        dist.scatter(out, ins, src=world - 1)
        assert_close(out.cpu(), rank_input(rank, shape, dtype))


def check_send_recv(rank, world):
    # A ring: even ranks send first so the blocking pair never deadlocks.
    for shape, dtype in cases():
        got = npu(torch.zeros(shape, dtype=dtype))
        mine = npu(rank_input(rank, shape, dtype))
        nxt, prv = (rank + 1) % world, (rank - 1) % world
        if rank % 2 == 0:
            dist.send(mine, nxt)
            dist.recv(got, prv)
        else:
            dist.recv(got, prv)
            dist.send(mine, nxt)
        assert_close(got.cpu(), rank_input(prv, shape, dtype))


def check_batch_isend_irecv(rank, world):
    for shape, dtype in cases():
        nxt, prv = (rank + 1) % world, (rank - 1) % world
        from_prv, from_nxt = npu(torch.zeros(shape, dtype=dtype)), npu(torch.zeros(shape, dtype=dtype))
        # Receives listed before sends on every rank: must not deadlock.
        ops = [dist.P2POp(dist.irecv, from_prv, prv), dist.P2POp(dist.irecv, from_nxt, nxt),
               dist.P2POp(dist.isend, npu(rank_input(rank, shape, dtype)), nxt),
               dist.P2POp(dist.isend, npu(rank_input(rank, shape, dtype)), prv)]
        for work in dist.batch_isend_irecv(ops):
            work.wait()
        assert_close(from_prv.cpu(), rank_input(prv, shape, dtype))
        assert_close(from_nxt.cpu(), rank_input(nxt, shape, dtype))


def check_recv_any_source(rank, world):
    # Every other rank sends to rank 0, which receives with src=None and learns who sent each.
    for dtype in DTYPES:
        if rank == 0:
            senders = []
            for _ in range(world - 1):
                got = npu(torch.zeros(6, dtype=dtype))
                src = dist.recv(got, src=None)
                assert_close(got.cpu(), rank_input(src, (6,), dtype))
                senders.append(src)
            assert sorted(senders) == list(range(1, world)), senders
        else:
            dist.send(npu(rank_input(rank, (6,), dtype)), 0)
        # Without it a fast sender's next message (another dtype) may come before a slow one's.
        dist.barrier()


def check_premul_sum(rank, world):
    # PREMUL_SUM (FSDP's gradient scaling): the sum of every rank's tensor times the factor,
    # given as a number or as a one-element npu tensor.
    factors = (0.25, npu(torch.tensor(0.5)))
    for factor in factors:
        op = dist._make_nccl_premul_sum(factor)
        scale = float(factor) if isinstance(factor, float) else 0.5
        for dtype in (torch.float32, torch.bfloat16):
            t = npu(rank_input(rank, (2, 3, 8), dtype))
            dist.all_reduce(t, op=op)
            want = (REDUCTIONS[dist.ReduceOp.SUM](every(world, (2, 3, 8), dtype)).double() * scale).to(dtype)
            assert_close(t.cpu(), want)
            full = npu(rank_input(rank, (world * 4,), dtype))
            out = npu(torch.zeros(4, dtype=dtype))
            dist.reduce_scatter_tensor(out, full, op=op)
            summed = REDUCTIONS[dist.ReduceOp.SUM](every(world, (world * 4,), dtype))
            assert_close(out.cpu(), (summed[rank * 4:(rank + 1) * 4].double() * scale).to(dtype))
            assert_close(full.cpu(), rank_input(rank, (world * 4,), dtype))  # the input is left as it was


def refused_with(fn, pattern: str) -> None:
    try:
        fn()
    except RuntimeError as err:
        assert re.search(pattern, str(err)), str(err)
    else:
        raise AssertionError(f"not refused (expected {pattern!r})")


def check_internal_formats(rank, world):
    # Whole NZ tensors are reduced, broadcast and gathered in their physical layout (as HCCL
    # does) and keep their format; what would mix up their physical order is refused with the fix.
    torch.npu.config.allow_internal_format = True
    values = [torch.arange(20 * 24, dtype=torch.float32).reshape(20, 24) * (r + 1) for r in range(world)]

    def nz(t: torch.Tensor) -> torch.Tensor:
        return torch_npu.npu_format_cast(npu(t), 29)

    t = nz(values[rank])
    dist.all_reduce(t)
    assert torch.equal(t.cpu(), sum(values)) and torch_npu.get_npu_format(t) == 29
    b = nz(values[rank])
    dist.broadcast(b, src=world - 1)
    assert torch.equal(b.cpu(), values[world - 1]) and torch_npu.get_npu_format(b) == 29
    gathered = [nz(torch.zeros(20, 24)) for _ in range(world)]
    dist.all_gather(gathered, nz(values[rank]))
    assert all(torch.equal(g.cpu(), v) for g, v in zip(gathered, values))
    nxt, prv = (rank + 1) % world, (rank - 1) % world
    got = nz(torch.zeros(20, 24))
    works = dist.batch_isend_irecv([dist.P2POp(dist.irecv, got, prv), dist.P2POp(dist.isend, nz(values[rank]), nxt)])
    for work in works:
        work.wait()
    assert torch.equal(got.cpu(), values[prv]) and torch_npu.get_npu_format(got) == 29

    whole = nz(values[rank])
    offset_view = torch.empty(0, device=whole.device).set_(whole.untyped_storage(), 16, (10,), (1,))
    refused_with(lambda: dist.all_reduce(offset_view), r"storage offset 16[\s\S]*npu_format_cast\(t, 2\)[\s\S]*ERR02007")
    into_tensor = npu(torch.zeros(world * 20, 24))
    refused_with(lambda: dist.all_gather_into_tensor(into_tensor, whole),
                 r"concatenates along dim 0[\s\S]*npu_format_cast\(t, 2\)[\s\S]*ERR02007")
    mixed = [npu(torch.zeros(20, 24)) for _ in range(world)]
    refused_with(lambda: dist.all_gather(mixed, whole), r"one format and one shape[\s\S]*ERR02007")
    torch.npu.config.allow_internal_format = False


def check_barrier(rank, world):
    dist.barrier()
    dist.barrier()


def check_async_work_and_future(rank, world):
    t = npu(rank_input(rank, (1024,), torch.float32))
    work = dist.all_reduce(t, async_op=True)
    future = work.get_future()
    assert work.wait()
    assert work.is_completed() and work.is_success()
    [result] = future.wait()
    want = REDUCTIONS[dist.ReduceOp.SUM](every(world, (1024,), torch.float32))
    assert_close(result.cpu(), want)
    assert result.device == t.device
    chained = dist.all_reduce(t, async_op=True).get_future().then(lambda f: f.value()[0].cpu() * 0 + 7)
    assert_close(chained.wait(), torch.full((1024,), 7.0))


def check_ordered_after_queued_copy(rank, world):
    # The stream is kept busy, so the queued host-to-device copy lands well after the
    # collective is called: the collective must wait for it, not read stale memory.
    src = rank_input(rank, (1 << 20,), torch.float32).pin_memory()
    t = npu(torch.zeros(1 << 20))
    torch_npu._C._npu_sleep_on_stream(200)
    t.copy_(src, non_blocking=True)
    start = time.monotonic()
    dist.all_reduce(t)
    assert time.monotonic() - start > 0.15, "the collective did not wait for the busy stream"
    assert_close(t.cpu(), REDUCTIONS[dist.ReduceOp.SUM](every(world, (1 << 20,), torch.float32)))


def check_wait_on_async_work_orders_later_stream_work(rank, world):
    t = npu(rank_input(rank, (4096,), torch.float32))
    work = dist.all_reduce(t, async_op=True)
    work.wait()
    # Queued after wait(): must read the reduced values.
    out = torch.empty(4096, device=t.device)
    out.copy_(t)
    assert_close(out.cpu(), REDUCTIONS[dist.ReduceOp.SUM](every(world, (4096,), torch.float32)))


def check_non_contiguous(rank, world):
    base = npu(rank_input(rank, (4, 6), torch.float32))
    view = base.t()
    dist.all_reduce(view)
    assert_close(base.cpu(), REDUCTIONS[dist.ReduceOp.SUM](every(world, (4, 6), torch.float32)))


def check_uneven_extras(rank, world):
    sizes = [r + 1 for r in range(world)]
    rows = sum(sizes)
    full = [rank_input(r, (rows, 2), torch.float32) for r in range(world)]
    out = npu(torch.zeros(sizes[rank], 2))
    npu_dist.reduce_scatter_tensor_uneven(out, npu(full[rank]), input_split_sizes=sizes)
    assert_close(out.cpu(), torch.stack(full).sum(0).split(sizes)[rank])
    gathered = npu(torch.zeros(rows, 2))
    work = npu_dist.all_gather_into_tensor_uneven(gathered, npu(rank_input(rank, (sizes[rank], 2), torch.float32)),
                                                  output_split_sizes=sizes, async_op=True)
    work.wait()
    want = torch.cat([rank_input(r, (sizes[r], 2), torch.float32) for r in range(world)])
    assert_close(gathered.cpu(), want)


def check_reinit(rank, world):
    npu_dist.reinit_process_group()
    t = npu(rank_input(rank, (8,), torch.float32))
    dist.all_reduce(t)
    assert_close(t.cpu(), REDUCTIONS[dist.ReduceOp.SUM](every(world, (8,), torch.float32)))


def check_wrong_device_rejected(rank, world):
    other = torch.ones(4, device=f"npu:{world + rank}")
    try:
        dist.all_reduce(other)
    except Exception as e:  # noqa: BLE001 - the message is what is checked
        assert "ERR02003" in str(e) and f"npu:{rank}" in str(e), str(e)
    else:
        raise AssertionError("a tensor on another rank's device was accepted")


def check_cpu_tensor_rejected(rank, world):
    # c10d routes CPU tensors to a CPU backend; calling the npu backend directly reaches our check.
    backend = dist.group.WORLD._get_backend(torch.device("npu"))
    try:
        backend.allreduce([torch.ones(4)], dist.AllreduceOptions())
    except Exception as e:  # noqa: BLE001
        assert "ERR02001" in str(e) and f"cpu:gloo,npu:{backend.name()}" in str(e), str(e)
    else:
        raise AssertionError(f"the {backend.name()} backend accepted a CPU tensor")


def check_cpu_tensors_on_mixed_group(rank, world):
    # Only the 2-rank run creates its group as "cpu:gloo,npu:<backend>".
    if world != 2:
        return
    on_cpu = torch.full((3,), float(rank + 1))
    dist.all_reduce(on_cpu)
    assert_close(on_cpu, torch.full((3,), 3.0))
    assert dist.group.WORLD._get_backend(torch.device("cpu")).name() == "gloo"


CHECKS = {name[len("check_"):]: fn for name, fn in globals().items() if name.startswith("check_")}


def check_matches_hccl(rank, world):
    # Non-integer values, so a different summation order would show: lccl and hccl agree.
    hccl = dist.new_group(backend="hccl")
    for dtype in (torch.float32, torch.bfloat16):
        gen = torch.Generator().manual_seed(rank)
        x = torch.randn(1000, generator=gen).to(dtype).npu()
        via_lccl, via_hccl = x.clone(), x.clone()
        dist.all_reduce(via_lccl)
        dist.all_reduce(via_hccl, group=hccl)
        if dtype == torch.float32:
            assert_close(via_lccl.cpu(), via_hccl.cpu())
        else:  # bfloat16 sums round at every step, and the two add in different orders
            assert_close(via_lccl.cpu().float(), via_hccl.cpu().float(), atol=0.125, rtol=0.02)
        gathered_l = torch.zeros(world * 1000, dtype=dtype).npu()
        gathered_h = torch.zeros(world * 1000, dtype=dtype).npu()
        dist.all_gather_into_tensor(gathered_l, x)
        dist.all_gather_into_tensor(gathered_h, x, group=hccl)
        assert torch.equal(gathered_l.cpu(), gathered_h.cpu())
    dist.destroy_process_group(hccl)


def check_large_all_reduce_uneven_length(rank, world):
    # Slices of unequal length (numel not a multiple of the world), each reduced and written back
    # in several blocks, over several segments: every element differs, so a misplaced block shows.
    n = (3 << 20) + 7
    pattern = (torch.arange(n) % 1021).float()
    t = (pattern + rank).npu()
    dist.all_reduce(t)
    assert_close(t.cpu(), pattern * world + sum(range(world)))


# reinit rebuilds hccl's Gloo transport: hccl only. The last two compare lccl with hccl and
# cover lccl's own slicing.
CHECKS_BY_BACKEND = {
    "hccl": CHECKS,
    "lccl": {**{n: f for n, f in CHECKS.items() if n != "reinit"}, "matches_hccl": check_matches_hccl,
             "large_all_reduce_uneven_length": check_large_all_reduce_uneven_length},
}


def run_checks(rank: int, world: int) -> dict[str, dict[str, str | None]]:
    """Run every check on an hccl group, then on an lccl group, in the same processes.

    Returns backend -> check name -> None (passed) or the traceback. Ranks are spawned once
    for both backends (spawning costs seconds per rank); each group rendezvouses under its
    own prefix of one TCPStore at MASTER_ADDR/PORT (spawn_ranks sets them, with RANK,
    WORLD_SIZE and LOCAL_RANK, as torchrun does). 2 ranks use the mixed spec
    "cpu:gloo,npu:<backend>", 4 ranks the plain backend name.
    """
    import os

    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world, rank == 0,
                          timeout=GROUP_TIMEOUT)
    outcome = {}
    for backend, checks in CHECKS_BY_BACKEND.items():
        spec = f"cpu:gloo,npu:{backend}" if world == 2 else backend
        dist.init_process_group(spec, store=dist.PrefixStore(backend, store), rank=rank, world_size=world,
                                timeout=GROUP_TIMEOUT)
        assert torch.accelerator.current_device_index() == rank, f"the {backend} backend selects npu:LOCAL_RANK"
        assert dist.group.WORLD._get_backend(torch.device("npu")).name() == backend
        outcome[backend] = {}
        for name, check in checks.items():
            try:
                check(rank, world)
                outcome[backend][name] = None
            except Exception:  # noqa: BLE001 - reported per check to the parent
                outcome[backend][name] = traceback.format_exc()
        dist.destroy_process_group()
    return outcome
