"""Streams and events: asynchrony, cross-stream ordering, timing, context managers."""

import time

import pytest
import torch

import torch_npu
from torch_npu import _C


def test_stream_work_is_asynchronous_until_synchronize():
    t0 = time.perf_counter()
    _C._npu_sleep_on_stream(300.0)
    queued = time.perf_counter() - t0
    torch.npu.synchronize()
    waited = time.perf_counter() - t0
    assert queued < 0.1
    assert waited >= 0.29


def test_stream_query_reports_pending_work():
    s = torch.npu.Stream()
    with torch.npu.stream(s):
        _C._npu_sleep_on_stream(200.0)
    assert not s.query()
    s.synchronize()
    assert s.query()


def test_wait_event_orders_work_across_streams():
    producer, consumer = torch.npu.Stream(), torch.npu.Stream()
    assert producer != consumer
    x = torch.zeros(4096, device="npu")
    torch.npu.synchronize()
    with torch.npu.stream(producer):
        _C._npu_sleep_on_stream(200.0)
        x.fill_(3.0)
        done = producer.record_event()
    consumer.wait_event(done)
    with torch.npu.stream(consumer):
        y = x * 1  # computed on consumer once x is filled
        z = torch.empty_like(x)
        z.copy_(x)
    consumer.synchronize()
    assert torch.equal(z.cpu(), torch.full((4096,), 3.0))
    assert torch.equal(y.cpu(), torch.full((4096,), 3.0))


def test_wait_stream_orders_work():
    s = torch.npu.Stream()
    x = torch.zeros(100, device="npu")
    torch.npu.synchronize()
    with torch.npu.stream(s):
        _C._npu_sleep_on_stream(150.0)
        x.fill_(5.0)
    torch.npu.current_stream().wait_stream(s)
    z = torch.empty_like(x)
    z.copy_(x)
    torch.npu.current_stream().synchronize()
    assert torch.equal(z.cpu(), torch.full((100,), 5.0))


def test_elapsed_time_measures_queued_work():
    start = torch.npu.Event(enable_timing=True)
    end = torch.npu.Event(enable_timing=True)
    start.record()
    _C._npu_sleep_on_stream(50.0)
    end.record()
    end.synchronize()
    assert start.query() and end.query()
    ms = start.elapsed_time(end)
    assert 45.0 <= ms < 2000.0


def test_elapsed_time_without_timing_is_a_value_error():
    a, b = torch.npu.Event(), torch.npu.Event()
    a.record()
    b.record()
    b.synchronize()
    with pytest.raises(ValueError, match="enable_timing(.|\\n)*ERR00003"):
        a.elapsed_time(b)


def test_generic_torch_event_and_stream_work_on_npu():
    s = torch.Stream(device="npu")
    e1, e2 = torch.Event("npu", enable_timing=True), torch.Event("npu", enable_timing=True)
    e1.record(s)
    e2.record(s)
    s.synchronize()
    assert e1.elapsed_time(e2) >= 0.0
    assert torch.accelerator.current_stream().device_type == torch.npu.current_stream().device_type


def test_stream_context_sets_and_restores_current_stream():
    default = torch.npu.current_stream()
    assert default == torch.npu.default_stream() and default.stream_id == 0
    s = torch.npu.Stream()
    with torch.npu.stream(s):
        assert torch.npu.current_stream() == s
        assert torch.accelerator.current_stream().stream_id == s.stream_id
    assert torch.npu.current_stream() == default


def test_stream_context_on_another_device_switches_device_and_restores():
    s1 = torch.npu.Stream(device=1)
    assert s1.device_index == 1
    with torch.npu.stream(s1):
        assert torch.npu.current_device() == 1
        assert torch.npu.current_stream() == s1
        assert torch.ones(1, device="npu").device.index == 1
    assert torch.npu.current_device() == 0
    assert torch.npu.current_stream(1).stream_id == 0


def test_priorities_take_streams_from_separate_pools():
    low = torch.npu.Stream(priority=0)
    high = torch.npu.Stream(priority=-1)
    assert low.priority == 0 and high.priority == -1
    assert 1 <= low.stream_id <= 32 and 33 <= high.stream_id <= 64


def test_set_stream_and_pool_round_robin():
    ids = {torch.npu.Stream().stream_id for _ in range(40)}
    assert len(ids) == 32  # the whole low-priority pool, reused round robin
    s = torch.npu.Stream()
    torch.npu.set_stream(s)
    try:
        assert torch.npu.current_stream() == s
    finally:
        torch.npu.set_stream(torch.npu.default_stream())


def test_sync_debug_mode_warns_and_errors_on_item():
    x = torch.ones(1, device="npu")
    try:
        torch.npu.set_sync_debug_mode("warn")
        assert torch.npu.get_sync_debug_mode() == 1
        with pytest.warns(UserWarning, match="synchronizing NPU operation"):
            x.item()
        torch.npu.set_sync_debug_mode(2)
        with pytest.raises(RuntimeError, match="ERR00007"):
            x.item()
    finally:
        torch.npu.set_sync_debug_mode("default")
    assert x.item() == 1.0
    with pytest.raises(RuntimeError, match="ERR00003"):
        torch.npu.set_sync_debug_mode("loud")


def test_failing_stream_task_surfaces_at_the_next_synchronize():
    x = torch.zeros(3, dtype=torch.int8, device="npu")
    x.fill_(1e10)  # queued: the device-side fill fails when it runs, not here
    with pytest.raises(RuntimeError, match="overflow(.|\n)*ERR00100"):
        torch.npu.synchronize()
    torch.npu.synchronize()  # the error was reported once; the device goes on
    x.fill_(5)
    assert x.tolist() == [5, 5, 5]


def test_record_stream_keeps_block_for_the_stream():
    s = torch.npu.Stream()
    x = torch.ones(1 << 16, device="npu")
    with torch.npu.stream(s):
        _C._npu_sleep_on_stream(100.0)
        y = x * 2
    x.record_stream(s)
    y.record_stream(torch.npu.current_stream())
    del x
    s.synchronize()
    assert torch.equal(y.cpu(), torch.full((1 << 16,), 2.0))
