"""torch.npu.MemPool / use_mem_pool (torch.cuda's test_mempool_*): a pool's allocations stay in it,
its use count, its snapshot, thread routing, sharing a pool with a graph capture."""

import threading

import pytest
import torch

import torch_npu  # noqa: F401


def _pool_segments(pool_id):
    return [s for s in torch.npu.memory_snapshot() if tuple(s["segment_pool_id"]) == tuple(pool_id)]


def _block_in(segments, ptr):
    return any(b["address"] == ptr for s in segments for b in s["blocks"])


def test_mempool_id():
    pool1 = torch.npu.graph_pool_handle()
    pool2 = torch.npu.MemPool().id
    # The first value of a user-created pool's id is always zero; each handle is new.
    assert pool1[0] == 0 and pool2[0] == 0
    assert abs(pool2[1] - pool1[1]) > 0


def test_mempool_context_routes_allocations_and_counts_uses():
    pool = torch.npu.MemPool()
    assert pool.use_count() == 1
    outside_before = torch.ones(1024, device="npu")
    with torch.npu.use_mem_pool(pool):
        assert pool.use_count() == 2
        inside = torch.ones(1024, device="npu")
        inside2 = inside * 2
    assert pool.use_count() == 1
    outside_after = torch.ones(1024, device="npu")
    segments = pool.snapshot()
    assert segments and all(tuple(s["segment_pool_id"]) == pool.id for s in segments)
    assert _block_in(segments, inside.data_ptr()) and _block_in(segments, inside2.data_ptr())
    assert not _block_in(segments, outside_before.data_ptr()) and not _block_in(segments, outside_after.data_ptr())
    torch.testing.assert_close(inside2.cpu(), torch.full((1024,), 2.0))


def test_a_freed_pool_block_is_reused_only_inside_the_pool():
    pool = torch.npu.MemPool()
    with torch.npu.use_mem_pool(pool):
        t = torch.empty(4096, device="npu")
    ptr = t.data_ptr()
    del t
    outside = torch.empty(4096, device="npu")
    assert outside.data_ptr() != ptr
    with torch.npu.use_mem_pool(pool):
        again = torch.empty(4096, device="npu")
    assert again.data_ptr() == ptr


def test_dropping_the_pool_releases_its_memory_after_its_tensors():
    torch.npu.empty_cache()
    reserved = torch.npu.memory_reserved()
    pool = torch.npu.MemPool()
    pool_id = pool.id
    with torch.npu.use_mem_pool(pool):
        t = torch.ones(3 << 18, device="npu")  # 3 MiB
    assert torch.npu.memory_reserved() > reserved
    del pool
    assert t.sum().item() == 3 << 18  # still valid
    del t
    torch.npu.empty_cache()
    assert torch.npu.memory_reserved() == reserved
    assert _pool_segments(pool_id) == []


def test_use_mem_pool_routes_only_the_calling_thread():
    pool = torch.npu.MemPool()
    other = {}

    def allocate():
        other["t"] = torch.ones(512, device="npu")

    with torch.npu.use_mem_pool(pool):
        mine = torch.ones(512, device="npu")
        thread = threading.Thread(target=allocate)
        thread.start()
        thread.join()
    segments = pool.snapshot()
    assert _block_in(segments, mine.data_ptr())
    assert not _block_in(segments, other["t"].data_ptr())


def test_a_graph_captures_into_a_mem_pool():
    pool = torch.npu.MemPool()
    x = torch.ones(256, device="npu")
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g, pool=pool.id):
        assert pool.use_count() == 2
        y = x + 1
    assert g.pool() == pool.id
    assert _block_in(pool.snapshot(), y.data_ptr())
    g.replay()
    torch.testing.assert_close(y.cpu(), torch.full((256,), 2.0))
    g.reset()
    assert pool.use_count() == 1


def test_mempool_bad_arguments():
    with pytest.raises(NotImplementedError, match=r"use_on_oom=True.*\n.*ERR03007"):
        torch.npu.MemPool(use_on_oom=True)
    pool = torch.npu.MemPool()
    with torch.npu.use_mem_pool(pool):
        with pytest.raises(ValueError, match=r"already go to memory pool.*\n.*ERR03003"):
            with torch.npu.use_mem_pool(pool):
                pass
    assert pool.use_count() == 1
