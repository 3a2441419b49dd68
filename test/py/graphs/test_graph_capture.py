"""NPU graph capture and replay, ported from torch's test_cuda.py graph tests: launches recorded
not run, replay on the current stream, private pools (shared or not), memory stats over replays,
multi-stream capture, torch.accelerator.Graph."""

import gc
import warnings

import pytest
import torch

import torch_npu  # noqa: F401


def func_with_temps(t: torch.Tensor, val: float) -> torch.Tensor:
    x = t.clone() + val
    y = t.clone() + val
    return x + y


def test_graph_capture_simple():
    s = torch.npu.Stream()
    with torch.npu.stream(s):
        a = torch.full((1000,), 1.0, device="npu")
        g = torch.npu.NPUGraph()
        torch.npu.empty_cache()
        g.capture_begin()
        b = a
        for _ in range(10):
            b = b + 1
        g.capture_end()
        assert not torch.npu.is_current_stream_capturing()
    torch.npu.current_stream().wait_stream(s)
    a.fill_(2.0)  # the capture ran nothing: a replay reads a as it is then
    g.replay()
    assert b.sum().item() == 12000.0
    g.replay()  # replays recompute from a, they do not accumulate
    assert b.sum().item() == 12000.0


def test_launches_during_capture_do_not_run():
    x = torch.zeros(8, device="npu")
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        assert torch.npu.is_current_stream_capturing()
        x.add_(1)
    assert not torch.npu.is_current_stream_capturing()
    torch.testing.assert_close(x.cpu(), torch.zeros(8))
    for expected in (1.0, 2.0, 3.0):
        g.replay()
        torch.testing.assert_close(x.cpu(), torch.full((8,), expected))


def test_replay_on_default_stream_and_reset_recapture():
    x = torch.ones(16, device="npu")
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        y = x * 3
    g.replay()  # on the default stream
    torch.testing.assert_close(y.cpu(), torch.full((16,), 3.0))
    with pytest.raises(RuntimeError, match="already owns a captured graph"):
        g.capture_begin()
    g.reset()
    with pytest.raises(RuntimeError, match="without a preceding successful capture"):
        g.replay()
    with torch.npu.graph(g):
        z = x - 5
    g.replay()
    torch.testing.assert_close(z.cpu(), torch.full((16,), -4.0))


def test_instantiate_follows_keep_graph():
    # torch's test_cuda_graph_raw_graph_keep_graph_false / _reset_and_recapture: instantiate is the
    # user's only with keep_graph=True, where a replay instantiates the graph if they did not
    g = torch.npu.NPUGraph()
    with pytest.raises(RuntimeError, match=r"capture_end\(\) must have been called before calling instantiate"):
        g.instantiate()
    x = torch.zeros(64, device="npu")
    with torch.npu.graph(g):
        x += 1.0
    with pytest.raises(RuntimeError, match=r"instantiate\(\) is intended to be called by the user only when keep_graph=true"):
        g.instantiate()
    kept = torch.npu.NPUGraph(keep_graph=True)
    x = torch.zeros(64, device="npu")
    with torch.npu.graph(kept):
        x += 1.0
    kept.instantiate()
    kept.replay()
    kept.instantiate()
    kept.replay()
    kept.replay()
    torch.testing.assert_close(x.cpu(), torch.full((64,), 3.0))
    kept.reset()
    x = torch.zeros(64, device="npu")
    with torch.npu.graph(kept):
        x += 2.0
    kept.replay()  # instantiates
    kept.instantiate()
    kept.replay()
    torch.testing.assert_close(x.cpu(), torch.full((64,), 4.0))


@pytest.mark.parametrize("share_mem", ["Don't share", "via pool()", "via graph_pool_handle()"])
def test_graph_two_successive(share_mem):
    torch.npu.empty_cache()
    size = 1000
    s = torch.npu.Stream()
    g0 = torch.npu.NPUGraph()
    g1 = torch.npu.NPUGraph()
    a = torch.ones((size,), device="npu")
    s.wait_stream(torch.npu.current_stream())
    with torch.npu.stream(s):
        g0_args = (torch.npu.graph_pool_handle(),) if share_mem == "via graph_pool_handle()" else ()
        g0.capture_begin(*g0_args)
        b = a.clone()
        for _ in range(5):
            b = func_with_temps(b, 1)
        g0.capture_end()
        g1_args = (g0.pool(),) if share_mem == "via pool()" else g0_args
        g1.capture_begin(*g1_args)
        for _ in range(5):
            b = func_with_temps(b, 1)
        g1.capture_end()
    torch.npu.current_stream().wait_stream(s)
    # mixes unrelated eager ops with replays
    c = a.clone()
    for _ in range(2):
        c = func_with_temps(c, 3)
    g0.replay()
    for _ in range(2):
        c = func_with_temps(c, 3)
    g1.replay()
    for _ in range(2):
        c = func_with_temps(c, 3)
    assert b.sum().item() == size * 3070
    assert c.sum().item() == size * 442
    reserved = torch.npu.memory_stats()["reserved_bytes.all.current"]
    small_segments = torch.npu.memory_stats()["segment.small_pool.current"]
    # Sharing, g1 captures into g0's pool: one small segment for both graphs' blocks.
    pools = {seg["segment_pool_id"] for seg in torch.npu.memory_snapshot() if seg["segment_pool_id"] != (0, 0)}
    assert len(pools) == (2 if share_mem == "Don't share" else 1)
    assert reserved > 0 and small_segments >= 1
    del a, b, c, g0, g1
    torch.npu.synchronize()
    torch.npu.empty_cache()


@pytest.mark.parametrize("share_mem", ["Don't share", "via pool()", "via graph_pool_handle()"])
def test_graph_three_successive(share_mem):
    torch.npu.empty_cache()
    size = 1000
    s = torch.npu.Stream()
    a = torch.ones((size,), device="npu")
    g0, g1, g2 = torch.npu.NPUGraph(), torch.npu.NPUGraph(), torch.npu.NPUGraph()
    s.wait_stream(torch.npu.current_stream())
    with torch.npu.stream(s):
        g0_args = (torch.npu.graph_pool_handle(),) if share_mem == "via graph_pool_handle()" else ()
        g0.capture_begin(*g0_args)
        b = a.clone()
        c = b + 1
        d = b + 2
        g0.capture_end()
        args = (g0.pool(),) if share_mem == "via pool()" else g0_args
        g1.capture_begin(*args)
        e = c + 3
        del c
        g1.capture_end()
        g2.capture_begin(*args)
        f = d + 4
        g2.capture_end()
    torch.npu.current_stream().wait_stream(s)
    # Replaying in capture order is valid
    g0.replay()
    g1.replay()
    g2.replay()
    assert e.sum().item() == size * 5
    assert f.sum().item() == size * 7
    # Replaying as g0, g2, g1 is only valid if they don't share a pool: sharing, g2's capture
    # reused c's memory for f, so g1's "e = c + 3" reads f's values.
    g0.replay()
    g2.replay()
    g1.replay()
    assert e.sum().item() == (size * (7 + 3) if share_mem != "Don't share" else size * 5)
    assert f.sum().item() == size * 7
    del a, b, d, e, f, g0, g1, g2
    torch.npu.synchronize()
    torch.npu.empty_cache()


def test_graph_concurrent_replay_with_separate_pools():
    # torch's test also shows shared-pool corruption, which needs kernels of two streams to
    # interleave in time (it pads with torch.cuda._sleep); only the separate-pool half is exact.
    size = 100000
    s, s0, s1 = torch.npu.Stream(), torch.npu.Stream(), torch.npu.Stream()
    g0, g1 = torch.npu.NPUGraph(), torch.npu.NPUGraph()
    a = torch.ones((size,), device="npu")
    s.wait_stream(torch.npu.current_stream())
    with torch.npu.stream(s):
        g0.capture_begin()
        b = a.clone()
        for _ in range(5):
            b = func_with_temps(b, 1)
        g0.capture_end()
        g1.capture_begin()
        c = a.clone()
        for _ in range(5):
            c = func_with_temps(c, 2)
        g1.capture_end()
    torch.npu.synchronize()
    with torch.npu.stream(s0):
        g0.replay()
    with torch.npu.stream(s1):
        g1.replay()
    torch.npu.current_stream().wait_stream(s0)
    torch.npu.current_stream().wait_stream(s1)
    assert b.sum().item() == size * 94
    assert c.sum().item() == size * 156


def test_graph_memory_stats_stable_and_use_result_after_destroy_graph():
    k_small_size, k_small_buffer, k_large_buffer = 1048576, 2097152, 20971520
    k_min_large_alloc, k_round_large = 10485760, 2097152
    elem = 4
    large_rounded = k_round_large * ((k_min_large_alloc + 512 + k_round_large - 1) // k_round_large)
    # (numel, segments the capture adds, bytes they hold, bytes left once only b lives, pool)
    cases = (
        (512 // elem, 1, k_small_buffer, k_small_buffer, "small_pool"),
        (k_small_size // elem, 2, 2 * k_small_buffer, k_small_buffer, "small_pool"),
        ((k_small_size + 512) // elem, 1, k_large_buffer, k_large_buffer, "large_pool"),
        ((k_min_large_alloc - 512) // elem, 2, 2 * k_large_buffer, k_large_buffer, "large_pool"),
        ((k_min_large_alloc + 512) // elem, 3, 3 * large_rounded, large_rounded, "large_pool"),
    )
    stats_to_check = ("segment.", "reserved_bytes.", "active.", "active_bytes.")
    gc.collect()
    torch.npu.empty_cache()
    s = torch.npu.Stream()
    for numel, delta_segments, delta_bytes, delta_bytes_post_del, pool in cases:
        g = torch.npu.NPUGraph()
        s.wait_stream(torch.npu.current_stream())
        with torch.npu.stream(s):
            a = torch.ones((numel,), device="npu")
            precapture = torch.npu.memory_stats()
            g.capture_begin()
            b = a.clone()
            for _ in range(5):
                b = b.clone() + 1
            g.capture_end()
        torch.npu.current_stream().wait_stream(s)
        gc.collect()
        postcapture = torch.npu.memory_stats()
        expecteds = (delta_segments, delta_bytes, 1, numel * elem)
        for i in range(2):
            for stat, expected in zip(stats_to_check, expecteds):
                key = stat + pool + ".current"
                assert postcapture[key] - precapture[key] == expected, (key, numel)
            g.replay()
            assert b.sum().item() == 6 * numel
            if i == 0:
                torch.npu.empty_cache()  # a live graph's pool keeps its memory
        # 100 replays allocate nothing (a few for the large cases: the host's time is shared)
        before = torch.npu.memory_stats()
        for _ in range(100 if numel * elem <= k_small_size else 3):
            g.replay()
        torch.npu.synchronize()
        after = torch.npu.memory_stats()
        for key in ("allocation.all.allocated", "segment.all.current", "reserved_bytes.all.current",
                    "active_bytes.all.current", "num_device_alloc"):
            assert after[key] == before[key], key
        assert b.sum().item() == 6 * numel

        del g
        gc.collect()
        torch.npu.empty_cache()
        postdel = torch.npu.memory_stats()
        assert b.sum().item() == 6 * numel  # the result outlives its graph
        # b is the only live block left from the graph's private pool
        for stat, expected in zip(stats_to_check, (1, delta_bytes_post_del, 1, numel * elem)):
            key = stat + pool + ".current"
            assert postdel[key] - precapture[key] == expected, (key, numel)
        del a, b
        torch.npu.synchronize()
        torch.npu.empty_cache()


def test_graph_record_stream_and_multi_stream_capture():
    # Frees during capture of blocks used on other streams wait for the capture's end
    # (torch: "Why skip process_events if a capture might be underway?").
    torch.npu.empty_cache()
    potential_problem = torch.zeros((3,), device="npu")
    a = torch.zeros((3,), device="npu")
    s0, s1, s2 = torch.npu.Stream(), torch.npu.Stream(), torch.npu.Stream()
    g = torch.npu.NPUGraph()
    torch.npu.synchronize()
    with torch.npu.stream(s0):
        potential_problem.record_stream(s0)
        potential_problem.fill_(1.0)
    del potential_problem
    with torch.npu.stream(s1):
        g.capture_begin()
        b = a.clone()
        s2.wait_stream(s1)  # s2 joins the capture
        with torch.npu.stream(s2):
            b.fill_(1.0)
            c = b + 2
            b.record_stream(s2)
            del b
        s1.wait_stream(s2)
        d = c * 2
        g.capture_end()
    torch.npu.synchronize()
    assert d.sum().item() == 0.0  # nothing ran yet
    g.replay()
    torch.npu.synchronize()
    assert d.sum().item() == 18.0
    torch.zeros((3,), device="npu")  # processes the deferred free


def test_empty_capture_warns():
    g = torch.npu.NPUGraph()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.npu.graph(g):
            pass
    assert any("The NPU Graph is empty" in str(w.message) for w in caught)


def test_accelerator_graph_is_npu_graph():
    x = torch.zeros(10, device="npu")
    s = torch.npu.Stream()
    g = torch.accelerator.Graph()
    with s, g:
        x += 1
    g.replay()
    g.replay()
    torch.testing.assert_close(x.cpu(), torch.full((10,), 2.0))
    assert g.pool()[1] == 0 and g.pool()[0] > 0


def test_debug_dump_lists_the_tasks(tmp_path):
    x = torch.ones(32, device="npu")
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        y = (x + 1) * 2
    g.enable_debug_mode()
    path = tmp_path / "graph.txt"
    g.debug_dump(str(path))
    lines = path.read_text().splitlines()
    assert lines[0].startswith("graph on device 0:") and len(lines) >= 2
    assert all(" kernel " in line or " memcpy" in line or " memset" in line for line in lines[1:])
    g.replay()
    torch.testing.assert_close(y.cpu(), torch.full((32,), 4.0))


def test_a_kernel_cache_miss_during_capture_compiles_and_is_recorded():
    # A shape no other test uses: the first call compiles on the host, only its launch is recorded.
    n = 1000 + torch.randint(0, 4000, ()).item()
    x = torch.rand(n, 3, device="npu")
    torch.npu.reset_eager_stats()
    g = torch.npu.NPUGraph()
    with torch.npu.graph(g):
        y = torch.atan2(x, x + 0.5) * 1.5
    assert torch.npu.eager_stats()["aten::atan2"]["misses"] == 1
    pool_segments = [s for s in torch.npu.memory_snapshot() if tuple(s["segment_pool_id"]) == g.pool()]
    assert any(b["address"] == y.data_ptr() for s in pool_segments for b in s["blocks"])
    g.replay()
    torch.testing.assert_close(y.cpu(), torch.atan2(x.cpu(), x.cpu() + 0.5) * 1.5)


@pytest.mark.parametrize("optimizer", [torch.optim.Adam, torch.optim.RMSprop])
def test_graph_optims_with_explicitly_capturable_param_groups(optimizer):
    # torch's test of the same name: a capturable step replayed matches eager steps; a param group
    # that is not capturable raises when captured (it would replay its first step's constants)
    n_warmup, n_replay = 3, 2
    for second_capturable in (True, False):
        ref1, ref2, p1, p2 = (torch.nn.Parameter(torch.ones(4, device="npu")) for _ in range(4))
        torch.manual_seed(0)
        grads1, grads2 = ([torch.randn(4, device="npu") for _ in range(n_warmup + n_replay)] for _ in range(2))
        opt = optimizer([{"params": [p1], "capturable": True}, {"params": [p2], "capturable": second_capturable}])
        ref = optimizer([{"params": [ref1], "capturable": False}, {"params": [ref2], "capturable": False}])
        for i in range(n_warmup + n_replay):
            ref1.grad, ref2.grad = grads1[i].clone(), grads2[i].clone()
            ref.step()
        for i in range(n_warmup):
            p1.grad, p2.grad = grads1[i].clone(), grads2[i].clone()
            opt.step()
        g = torch.npu.NPUGraph()
        if not second_capturable:
            with pytest.raises(RuntimeError, match="Attempting NPU graph capture of step"):
                with torch.npu.graph(g):
                    opt.step()
            continue
        with torch.npu.graph(g):
            opt.step()
        for i in range(n_replay):
            p1.grad.copy_(grads1[n_warmup + i])
            p2.grad.copy_(grads2[n_warmup + i])
            g.replay()
        torch.testing.assert_close(p1.detach().cpu(), ref1.detach().cpu())
        torch.testing.assert_close(p2.detach().cpu(), ref2.detach().cpu())
