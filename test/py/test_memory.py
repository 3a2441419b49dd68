"""torch_npu.npu.memory: the caching allocator seen from Python, checked like torch.cuda.memory.

Every malformed PYTORCH_NPU_ALLOC_CONF value is covered by runtime/test/test_alloc_conf.cpp;
here only the path from the environment to a Python ValueError is checked.

Tests that count bytes use devices 5-7, which no other test file allocates on, so the
counters they read are their own. Tests that need a small device or a bad
PYTORCH_NPU_ALLOC_CONF run in a subprocess (both are read once per process).
"""

import inspect
import os
import pickle
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.cuda._memory_viz as memory_viz

import torch_npu  # noqa: F401
from torch_npu.npu import memory

MiB = 1 << 20
STAT_NAMES = [
    "allocation",
    "segment",
    "active",
    "inactive_split",
    "allocated_bytes",
    "reserved_bytes",
    "active_bytes",
    "inactive_split_bytes",
    "requested_bytes",
]


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter with extra environment variables."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def device():
    """A device only this file allocates on, with no blocks live or cached."""
    index = 5
    memory.empty_cache()
    assert memory.memory_reserved(index) == 0
    yield index
    memory.set_per_process_memory_fraction(1.0, index)
    memory.empty_cache()


def test_all_lists_exactly_the_public_functions():
    defined = {
        name for name, obj in vars(memory).items() if inspect.isfunction(obj) and obj.__module__ == memory.__name__
    }
    public = {name for name in defined if not name.startswith("_") or name in memory.__all__}
    assert set(memory.__all__) == public
    for name in memory.__all__:
        assert callable(getattr(torch_npu.npu.memory, name))


def test_stats_return_to_zero_after_frees(device):
    pointers = [memory.caching_allocator_alloc(size, device) for size in (1, 700, 512 * 1024, 3 * MiB, 30 * MiB)]
    stats = memory.memory_stats(device)
    assert stats["allocation.all.current"] == 5
    assert stats["allocation.small_pool.current"] == 3
    assert stats["allocation.large_pool.current"] == 2
    assert stats["requested_bytes.all.current"] == 1 + 700 + 512 * 1024 + 33 * MiB
    assert memory.memory_allocated(device) == 512 + 1024 + 512 * 1024 + 33 * MiB
    for ptr in pointers:
        memory.caching_allocator_delete(ptr)
    stats = memory.memory_stats(device)
    for name in STAT_NAMES:
        if name not in ("segment", "reserved_bytes"):
            for pool in ("all", "small_pool", "large_pool"):
                assert stats[f"{name}.{pool}.current"] == 0, name
    assert stats["allocated_bytes.all.allocated"] == stats["allocated_bytes.all.freed"]
    assert memory.memory_reserved(device) == 2 * MiB + 20 * MiB + 30 * MiB  # cached, not returned
    memory.empty_cache()
    assert memory.memory_reserved(device) == 0


def test_tensor_memory_returns_to_zero(device):
    values = torch.randn(1000, 300)
    on_npu = values.to(f"npu:{device}")
    assert memory.memory_allocated(device) == (1000 * 300 * 4 + 511) // 512 * 512  # 512 B blocks
    assert torch.equal(on_npu.cpu(), values)
    del on_npu
    assert memory.memory_allocated(device) == 0
    assert memory.memory_stats(device)["active.all.current"] == 0


def test_peak_tracking(device):
    memory.reset_peak_memory_stats(device)
    big = memory.caching_allocator_alloc(8 * MiB, device)
    memory.caching_allocator_delete(big)
    small = memory.caching_allocator_alloc(MiB, device)
    assert memory.max_memory_allocated(device) == 8 * MiB
    assert memory.memory_allocated(device) == MiB
    assert memory.max_memory_reserved(device) >= 20 * MiB
    memory.reset_peak_memory_stats(device)
    assert memory.max_memory_allocated(device) == MiB
    with pytest.warns(FutureWarning):
        memory.reset_max_memory_allocated(device)
    memory.reset_accumulated_memory_stats(device)
    stats = memory.memory_stats(device)
    assert stats["allocated_bytes.all.allocated"] == 0 and stats["num_device_alloc"] == 0
    assert stats["allocated_bytes.all.current"] == MiB
    memory.caching_allocator_delete(small)


def test_memory_stats_has_torch_cuda_keys(device):
    stats = memory.memory_stats(f"npu:{device}")
    expected = {
        f"{name}.{pool}.{metric}"
        for name in STAT_NAMES
        for pool in ("all", "large_pool", "small_pool")
        for metric in ("current", "peak", "allocated", "freed")
    }
    expected |= {
        f"oversize_{kind}.{metric}"
        for kind in ("allocations", "segments")
        for metric in ("current", "peak", "allocated", "freed")
    }
    expected |= {
        "num_alloc_retries", "num_ooms", "num_sync_all_streams", "num_device_alloc", "num_device_free", "max_split_size"
    }
    assert set(stats) == expected
    assert list(stats) == sorted(stats)
    assert stats["max_split_size"] == -1
    nested = memory.memory_stats_as_nested_dict(device)
    assert nested["allocated_bytes"]["small_pool"]["peak"] == stats["allocated_bytes.small_pool.peak"]


def test_device_arguments_are_checked():
    with pytest.raises(ValueError, match="ERR00003"):
        memory.memory_stats("cpu")
    with pytest.raises(TypeError, match="ERR00002"):
        memory.memory_stats(1.5)
    with pytest.raises(Exception, match="ERR0000"):
        memory.memory_stats(99)


def test_memory_summary_has_torch_cuda_layout(device):
    ptr = memory.caching_allocator_alloc(3 * MiB, device)
    summary = memory.memory_summary(device)
    lines = summary.splitlines()
    assert all(len(line) == 77 and line.startswith("|") and line.endswith("|") for line in lines)
    assert f"PyTorch NPU memory summary, device ID {device}" in lines[1]
    allocated = next(line for line in lines if line.startswith("| Allocated memory"))
    assert allocated.split("|")[2].strip() == "3072 KiB"
    assert "from small pool" in summary and "Oversize NPU segments" in summary
    assert "from large pool" not in memory.memory_summary(device, abbreviated=True)
    memory.caching_allocator_delete(ptr)


def test_oom_raises_and_device_stays_usable(device):
    before = memory.memory_stats(device)["num_ooms"]
    with pytest.raises(torch.OutOfMemoryError) as error:
        memory.caching_allocator_alloc(100 << 30, device)  # 100 GiB on a device of at most 64 GiB
    message = str(error.value)
    assert "ERR00006" in message
    assert f"device {device}" in message and "Tried to allocate 100.00 GiB" in message
    total = torch.npu.get_device_properties(device).total_memory
    assert f"total capacity of {total / (1 << 30):.2f} GiB" in message
    assert "allocated" in message and "reserved" in message
    assert "PYTORCH_NPU_ALLOC_CONF" in message and "empty_cache" in message
    assert memory.memory_stats(device)["num_ooms"] == before + 1
    ptr = memory.caching_allocator_alloc(MiB, device)
    memory.caching_allocator_delete(ptr)


def test_tensor_oom_on_small_device_then_recovery():
    result = run_python(
        """
        import torch, torch_npu
        held = torch.ones(40 << 18, device="npu")  # 40 MiB of float32
        try:
            torch.empty(30 << 18, device="npu")
        except torch.OutOfMemoryError as error:
            print("OOM", "ERR00006" in str(error), "Tried to allocate 30.00 MiB" in str(error))
        del held
        x = torch.arange(30 << 18, dtype=torch.float32).to("npu")
        print("SUM", float(x.cpu().sum()) == float(torch.arange(30 << 18, dtype=torch.float32).sum()))
        print("OOMS", torch_npu.npu.memory.memory_stats()["num_ooms"])
        """,
        NPU_SIM_DEVICE_MEMORY="64M",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["OOM", "True", "True", "SUM", "True", "OOMS", "1"]


def test_per_process_memory_fraction(device):
    fraction = 16 * MiB / torch.npu.get_device_properties(device).total_memory
    memory.set_per_process_memory_fraction(fraction, device)
    assert memory.get_per_process_memory_fraction(device) == pytest.approx(fraction)
    with pytest.raises(torch.OutOfMemoryError, match="memory fraction"):
        memory.caching_allocator_alloc(20 * MiB, device)
    memory.set_per_process_memory_fraction(1.0, device)
    memory.caching_allocator_delete(memory.caching_allocator_alloc(20 * MiB, device))
    with pytest.raises(ValueError, match="ERR00003"):
        memory.set_per_process_memory_fraction(1.5, device)
    with pytest.raises(TypeError, match="ERR00002"):
        memory.set_per_process_memory_fraction("half", device)


def test_mem_get_info_tracks_reserved_memory(device):
    free_before, total = memory.mem_get_info(device)
    assert total == torch.npu.get_device_properties(device).total_memory and free_before == total
    ptr = memory.caching_allocator_alloc(3 * MiB, device)
    free_after, _ = memory.mem_get_info(device)
    assert free_before - free_after == 20 * MiB  # the whole cached segment
    memory.caching_allocator_delete(ptr)


def test_snapshot_and_history_render_in_memory_viz(device, tmp_path):
    memory._record_memory_history(max_entries=1000)
    try:
        ptr = memory.caching_allocator_alloc(4096, device)
        kept = memory.caching_allocator_alloc(5 * MiB, device)
        memory.caching_allocator_delete(ptr)
        snapshot = memory._snapshot()
    finally:
        memory._record_memory_history(None)
    trace = snapshot["device_traces"][device]
    assert [entry["action"] for entry in trace] == [
        "segment_alloc", "alloc", "segment_alloc", "alloc", "free_requested", "free_completed"
    ]
    assert trace[1]["size"] == 4096 and trace[1]["addr"] == ptr
    assert any(frame["name"] == "test_snapshot_and_history_render_in_memory_viz" for frame in trace[1]["frames"])
    segments = [seg for seg in snapshot["segments"] if seg["device"] == device]
    assert sorted(seg["segment_type"] for seg in segments) == ["large", "small"]
    live = [block for seg in segments for block in seg["blocks"] if block["state"] == "active_allocated"]
    assert [(block["address"], block["requested_size"]) for block in live] == [(kept, 5 * MiB)]
    assert any(frame["filename"] == __file__ for frame in live[0]["frames"])
    for seg in segments:
        assert seg["total_size"] == sum(block["size"] for block in seg["blocks"])
    assert "segments: 2" in memory_viz.segsum({"segments": segments, "device_traces": []})
    assert f"Device {device}" in memory_viz.trace(snapshot)
    assert "<html>" in memory_viz.segment_plot(snapshot)
    assert "<html>" in memory_viz.trace_plot(snapshot)
    path = tmp_path / "snapshot.pickle"
    memory._dump_snapshot(str(path))
    with open(path, "rb") as f:
        dumped = pickle.load(f)
    assert dumped["device_traces"][device] == []  # recording stopped: trace dropped
    assert any(seg["device"] == device for seg in dumped["segments"])
    assert len(memory.memory_snapshot()) == len(dumped["segments"])
    memory.caching_allocator_delete(kept)


def test_record_memory_history_rejects_bad_arguments():
    with pytest.raises(ValueError, match="ERR00003"):
        memory._record_memory_history("sometimes")
    with pytest.raises(ValueError, match="ERR00003"):
        memory._record_memory_history(context="everything")


def test_queries_do_not_start_the_device():
    result = run_python(
        """
        import torch, torch_npu
        from torch_npu.npu import memory
        memory.memory_stats(); memory.memory_summary(); memory.memory_snapshot(); memory.mem_get_info(0)
        print(torch_npu._C._npu_has_primary_context(0), memory.memory_allocated())
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "0"]


@pytest.mark.parametrize(
    "conf, expected",
    [
        ("bogus:1", "unknown option 'bogus'"),
        ("expandable_segments:True,max_split_size_mb:5", "greater than 20"),
    ],
)
def test_alloc_conf_errors_name_the_option(conf, expected):
    result = run_python(
        """
        import torch, torch_npu
        try:
            torch_npu.npu.memory.memory_stats(0)
        except ValueError as error:
            print(str(error))
        """,
        PYTORCH_NPU_ALLOC_CONF=conf,
    )
    assert result.returncode == 0, result.stderr
    assert expected in result.stdout and "ERR00003" in result.stdout and "PYTORCH_NPU_ALLOC_CONF" in result.stdout


def test_alloc_conf_is_honoured():
    result = run_python(
        """
        import torch, torch_npu
        x = torch.empty(3 << 20, dtype=torch.uint8, device="npu")
        stats = torch_npu.npu.memory.memory_stats()
        print(stats["reserved_bytes.all.current"] >> 20, stats["max_split_size"] >> 20)
        """,
        PYTORCH_NPU_ALLOC_CONF="expandable_segments:True,max_split_size_mb:64",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["4", "64"]  # a 4 MiB segment, not 20 MiB
