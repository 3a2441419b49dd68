"""The simulated device never takes the host down: device and pinned memory are bounded
by what the host can give, caches are released before an allocation fails, and running
past the bound is a clean NPU out-of-memory error the process survives."""

import os
import subprocess
import sys
import textwrap

import pytest
import torch

import torch_npu  # noqa: F401

MiB = 1 << 20


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_default_capacity_is_bounded_by_the_host():
    used, limit = torch.npu.host_mem_info()
    physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert 256 * MiB <= limit <= physical * 3 // 4 + MiB
    assert torch.npu.get_device_properties(0).total_memory == min(64 << 30, limit)
    assert used >= 0


def test_allocating_past_the_device_bound_is_a_clean_oom_and_the_process_lives():
    result = run_python(
        """
        import torch, torch_npu
        held = []
        try:
            for _ in range(100):  # 100 x 8 MiB would be 800 MiB; the device has 64
                held.append(torch.empty(8 << 20, dtype=torch.uint8, device="npu"))
        except torch.OutOfMemoryError as error:
            text = str(error)
            print("OOM", len(held) < 8, "NPU out of memory" in text, "ERR00006" in text)
        held.clear()
        x = torch.ones(4 << 20, device="npu")
        print("ALIVE", float(x.sum().cpu()) == float(4 << 20))
        """,
        NPU_SIM_DEVICE_MEMORY="64M",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["OOM", "True", "True", "True", "ALIVE", "True"]


def test_the_host_bound_covers_pinned_memory_and_caches_are_released_before_failing():
    result = run_python(
        """
        import torch, torch_npu
        pinned = []
        try:
            for _ in range(100):  # 16 MiB each, against a 96 MiB host bound
                pinned.append(torch.empty(16 << 20, dtype=torch.uint8).pin_memory())
        except torch.OutOfMemoryError as error:
            print("PINNED_OOM", len(pinned) == 6, "NPU_SIM_HOST_MEMORY" in str(error), "ERR00006" in str(error))
        pinned.clear()  # cached, still holding the host's memory
        print("CACHED", torch.npu.host_memory_stats()["allocated_bytes.current"] > 0)
        x = torch.empty(64 << 20, dtype=torch.uint8, device="npu")  # needs the pinned cache back
        print("RECLAIMED", torch.npu.host_memory_stats()["allocated_bytes.current"] == 0)
        try:
            torch.empty(200 << 20, dtype=torch.uint8, device="npu")
        except torch.OutOfMemoryError as error:
            print("DEVICE_OOM", "NPU_SIM_HOST_MEMORY" in str(error))
        print("ALIVE", int(x.fill_(3).sum().cpu()) == 3 * (64 << 20))
        """,
        NPU_SIM_DEVICE_MEMORY="1G",
        NPU_SIM_HOST_MEMORY="96M",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "PINNED_OOM", "True", "True", "True", "CACHED", "True", "RECLAIMED", "True", "DEVICE_OOM", "True",
        "ALIVE", "True",
    ]


def test_an_impossible_size_says_more_than_1eb():
    with pytest.raises(torch.OutOfMemoryError, match="Tried to allocate more than 1EB memory"):
        torch.empty(1 << 61, dtype=torch.int8, device="npu")
    with pytest.raises(torch.OutOfMemoryError, match="ERR00006"):
        torch.empty(1 << 60, dtype=torch.int8, device="npu")
    assert torch.ones(3, device="npu").cpu().sum().item() == 3


def test_a_freed_pinned_block_is_reused_for_the_next_request_of_its_size():
    torch.npu.host_empty_cache()
    torch.npu.reset_accumulated_host_memory_stats()
    first = torch.empty(3000, dtype=torch.uint8).pin_memory()
    address = first.data_ptr()
    assert first.is_pinned()
    del first
    second = torch.empty(4000, dtype=torch.uint8).pin_memory()  # same power-of-two bucket (4096)
    assert second.data_ptr() == address
    stats = torch.npu.host_memory_stats()
    assert stats["num_host_alloc"] == 1 and stats["active_requests.current"] == 1
    assert stats["allocated_bytes.current"] == 4096
    del second
    torch.npu.host_empty_cache()
    assert torch.npu.host_memory_stats()["allocated_bytes.current"] == 0


def test_pinned_block_used_by_a_non_blocking_copy_is_not_reused_before_the_copy_ran():
    torch.npu.host_empty_cache()
    src = torch.arange(1 << 16, dtype=torch.float32).pin_memory()
    address = src.data_ptr()
    torch_npu._C._npu_sleep_on_stream(200)  # keeps the copy below queued
    dst = src.to("npu", non_blocking=True)
    del src  # the queued copy still reads it
    other = torch.empty(1 << 16, dtype=torch.float32).pin_memory()
    assert other.data_ptr() != address
    torch.npu.synchronize()
    assert torch.equal(dst.cpu(), torch.arange(1 << 16, dtype=torch.float32))


def test_host_stats_keys_match_torch_cuda():
    keys = set(torch.npu.host_memory_stats())
    expected = {f"{stat}.{metric}" for stat in ("allocations", "allocated_bytes", "active_requests", "active_bytes")
                for metric in ("current", "peak", "allocated", "freed")}
    expected |= {f"host_{kind}_time.{metric}" for kind in ("alloc", "free")
                 for metric in ("total", "max", "min", "count", "avg")}
    expected |= {"num_host_alloc", "num_host_free"}
    assert keys == expected
    torch.npu.reset_peak_host_memory_stats()
    assert set(torch.npu.host_memory_stats_as_nested_dict()) == {k.split(".")[0] for k in expected}
