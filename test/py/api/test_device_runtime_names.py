"""torch_npu's device-runtime names: stop/restart_device, set_op_timeout_ms, utilization, SyncLaunchStream,
ExternalEvent, current_blas_handle, npurt, the obfuscation calls, ERR01001 on op argument errors, and a pinned
non-blocking D2H destination kept from reuse until its copy ran (overflow flags: test_overflow_modes.py)."""

import ctypes
import re
import time
import warnings

import pytest
import torch

import torch_npu


def slow_elementwise(x: torch.Tensor) -> torch.Tensor:
    """Kernels that take a few ms each on the simulator (exp of 4M elements)."""
    return torch.exp(x) * 1.0001


@pytest.fixture(scope="module")
def big():
    x = torch.randn(1 << 22).npu()
    slow_elementwise(x)  # compile once
    torch.npu.synchronize()
    return x


def test_stop_device_drops_work_and_raises_until_restart(big):
    y = torch.ones(8).npu()
    torch.npu.synchronize()
    pending = [slow_elementwise(big) for _ in range(4)]  # queued behind each other
    assert torch.npu.stop_device(0) == 0
    with pytest.raises(RuntimeError, match="restart_device") as info:
        torch.npu.synchronize()
    assert "ERR00100" in str(info.value)
    with pytest.raises(RuntimeError, match="was stopped"):
        y + 1
    torch.npu.restart_device(0)
    torch.testing.assert_close((y + 1).cpu(), torch.full((8,), 2.0))  # usable again, memory intact
    del pending
    with pytest.raises(TypeError, match="ERR00002"):
        torch.npu.stop_device("0")
    with pytest.raises(TypeError, match="ERR00002"):
        torch.npu.restart_device(0, rebuild_all_resource=1)


def test_stop_device_aborts_a_running_kernel_between_its_blocks():
    x = torch.randn(1 << 24).npu()  # exp of 16M elements: several ms, over many blocks
    torch.exp(x)  # compiled before
    torch.npu.synchronize()
    message = ""
    # Stopped while the kernel runs, the error names the kernel (queued work dropped before it
    # started says "stream task"; a kernel that finished raises nothing): a few tries at
    # different moments, as the machine's load moves when the worker starts it.
    for delay in (0.001, 0.002, 0.0005, 0.004, 0.003, 0.006):
        torch.exp(x)
        time.sleep(delay)
        torch.npu.stop_device(0)
        try:
            torch.npu.synchronize()
            message = ""
        except RuntimeError as e:
            message = str(e)
        finally:
            torch.npu.restart_device(0)
        if "kernel '" in message:
            break
    assert re.search(r"kernel '.*': device 0 was stopped[\s\S]*ERR00100", message), message
    torch.testing.assert_close(torch.exp(x[:8]).cpu(), torch.exp(x[:8].cpu()))


def test_a_kernel_past_the_op_timeout_raises_at_the_next_sync(big):
    torch.npu.set_op_timeout_ms(1)
    try:
        slow_elementwise(big)
        with pytest.raises(RuntimeError, match="operator execution timeout of 1 ms") as info:
            torch.npu.synchronize()
        assert "507014" in str(info.value)
    finally:
        torch.npu.set_op_timeout_ms(0)
    torch.testing.assert_close(slow_elementwise(big).cpu(), torch.exp(big.cpu()) * 1.0001)
    with pytest.raises(TypeError, match="ERR00002"):
        torch.npu.set_op_timeout_ms(1.5)
    with pytest.raises(ValueError, match="ERR00003"):
        torch.npu.set_op_timeout_ms(-1)


def test_utilization_is_the_busy_share_of_the_last_100ms(big):
    torch.npu.synchronize()
    time.sleep(0.15)
    assert torch.npu.utilization() == 0
    # Kernels of a few ms kept 4 deep in the queue for 0.25 s: the stream never idles, however
    # slowly this (maybe loaded) host schedules the test, and the backlog stays short.
    start, queued = time.monotonic(), []
    while time.monotonic() - start < 0.25:
        slow_elementwise(big)
        queued.append(torch.npu.Event())
        queued[-1].record()
        if len(queued) > 4:
            queued.pop(0).synchronize()
    assert torch.npu.utilization(0) >= 50
    torch.npu.synchronize()
    time.sleep(0.15)
    assert torch.npu.utilization(torch.device("npu:0")) == 0


def test_sync_launch_stream_runs_work_before_returning():
    s = torch.npu.SyncLaunchStream()
    assert isinstance(s, torch.npu.Stream) and s.device_index == 0
    x = torch.randn(256).npu()
    torch.npu.synchronize()
    with torch.npu.stream(s):
        y = x * 2
        assert s.query()  # nothing waits in a queue
    torch.testing.assert_close(y.cpu(), x.cpu() * 2)
    others = {torch.npu.SyncLaunchStream("npu:0").stream_id for _ in range(4)}
    assert len(others) == 4 and s.stream_id in others  # a pool of 4, round robin


def test_external_event_wait_queued_before_its_record():
    waiter, recorder = torch.npu.Stream(), torch.npu.Stream()
    event = torch.npu.ExternalEvent()
    x = torch.zeros(64).npu()
    torch.npu.synchronize()
    event.wait(waiter)
    with torch.npu.stream(waiter):
        y = x + 1
    time.sleep(0.05)
    assert not waiter.query()  # blocked: nothing recorded the event yet
    event.record(recorder)
    waiter.synchronize()
    torch.testing.assert_close(y.cpu(), torch.ones(64))
    event.record(recorder)
    event.reset(recorder)  # an unconsumed record is cleared
    recorder.synchronize()
    with pytest.raises(TypeError, match="ERR00002"):
        event.record("stream")


def test_current_blas_handle_and_npurt():
    with pytest.warns(UserWarning, match="NPU does not use blas handle"):
        assert torch.npu.current_blas_handle() is None
    rt = torch_npu.npu.npurt()
    stream = ctypes.c_void_p(0)
    assert rt.npuStreamCreate(ctypes.addressof(stream)) == 0 and stream.value
    ext = torch.npu.ExternalStream(stream.value)
    with torch.npu.stream(ext):
        z = torch.ones(4).npu() * 3
    assert rt.npuStreamDestroy(stream.value) == 0
    torch.testing.assert_close(z.cpu(), torch.full((4,), 3.0))
    assert rt.npuHostRegister(0, 16, 0) == 207000  # not supported by the simulated runtime


def test_obfuscation_calls_validate_then_report_no_engine():
    with pytest.raises(RuntimeError, match="507018") as info:
        torch.npu.obfuscation_initialize(3584, 0, 1, torch.bfloat16, 0, 0, 4, 1.0)
    assert "ERR00009" in str(info.value)
    with pytest.raises(ValueError, match="ERR00003"):
        torch.npu.obfuscation_initialize(20000, 0, 1, torch.bfloat16, 0, 0, 4, 1.0)
    with pytest.raises(TypeError, match="ERR00002"):
        torch.npu.obfuscation_initialize(3584, 0, 1, torch.int64, 0, 0, 4, 1.0)
    with pytest.raises(ValueError, match="ERR00003"):
        torch.npu.obfuscation_initialize(3584, 0, 1, torch.float16, 0, 0, 4, 1.5)
    fd = torch.tensor([3], dtype=torch.int32)
    with pytest.raises(RuntimeError, match="507018"):
        torch.npu.obfuscation_calculate(fd, torch.randn(2, 8), torch.tensor([8], dtype=torch.int32))
    with pytest.raises(TypeError, match="ERR00002"):
        torch.npu.obfuscation_finalize(3)
    with pytest.raises(RuntimeError, match="507018"):
        torch.npu.obfuscation_finalize(fd)


def test_op_argument_errors_carry_err01001_and_torch_s_wording():
    a, b = torch.randn(4).npu(), torch.randn(4).npu()
    with pytest.raises(RuntimeError, match="rounding_mode") as info:
        torch.div(a, b, rounding_mode="test")
    assert "ERR01001 OPS invalid parameter" in str(info.value)
    with pytest.raises(RuntimeError, match="approximate argument") as info:
        torch.nn.functional.gelu(a, approximate="bad")
    assert "ERR01001" in str(info.value)
    torch.testing.assert_close(torch.div(a, b, rounding_mode="floor").cpu(),
                               torch.div(a.cpu(), b.cpu(), rounding_mode="floor"))


def test_an_op_refused_by_its_own_checks_does_not_warn_that_it_ran_on_the_cpu():
    # The CPU fallback's warning says the op ran on the CPU: a call its checks refuse did not.
    a, b = torch.randn(4).npu(), torch.randn(4).npu()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="ERR01001"):
            torch.nn.functional.gelu(a, approximate="tanh-ish")
        with pytest.raises(RuntimeError, match="selected index k out of range"):
            torch.topk(a, 9)
    assert not [w for w in caught if "CPU" in str(w.message)], [str(w.message) for w in caught]
    values, indices = torch.topk(a, 3)
    want_values, want_indices = torch.topk(a.cpu(), 3)
    torch.testing.assert_close(values.cpu(), want_values)
    torch.testing.assert_close(indices.cpu(), want_indices)


def test_structured_ops_meta_checks_carry_err01001():
    # topk, gather and cumsum_ run torch's structured composite (its meta function checks, then
    # our out= kernel): the checks' errors keep torch's type and wording and gain ERR01001.
    a = torch.randn(4, 5).npu()
    index = torch.tensor([[0, 4, 1], [2, 2, 3], [1, 0, 0], [4, 3, 2]]).npu()
    with pytest.raises(RuntimeError, match=r"selected index k out of range[\s\S]*ERR01001 OPS invalid parameter"):
        torch.topk(a, 9)
    with pytest.raises(IndexError, match=r"Dimension out of range[\s\S]*ERR01001"):
        torch.gather(a, 5, index)
    with pytest.raises(IndexError, match=r"Dimension out of range[\s\S]*ERR01001"):
        a.clone().cumsum_(dim=3)
    torch.testing.assert_close(torch.gather(a, 1, index).cpu(), torch.gather(a.cpu(), 1, index.cpu()))
    summed = a.clone()
    summed.cumsum_(dim=1)
    torch.testing.assert_close(summed.cpu(), a.cpu().cumsum(dim=1))


def test_view_ops_refusals_carry_err01001():
    x = torch.randn(4, 5).npu()
    with pytest.raises(IndexError, match=r"Dimension out of range[\s\S]*ERR01001"):
        x.transpose(0, 5)
    with pytest.raises(IndexError, match=r"index 9 out of range[\s\S]*ERR01001"):
        x.select(0, 9)
    with pytest.raises(RuntimeError, match=r"duplicate dims[\s\S]*ERR01001"):
        x.permute(0, 0)
    with pytest.raises(RuntimeError, match=r"the number of sizes provided[\s\S]*ERR01001"):
        x.expand(3)
    torch.testing.assert_close(x.t().select(1, 2).cpu(), x.cpu().t().select(1, 2))


def test_view_size_errors_carry_err01001():
    # view, as_strided, _reshape_alias, unfold and view_as_real/complex are npu kernels of their own
    x = torch.randn(4, 5).npu()
    with pytest.raises(RuntimeError, match=r"shape '\[3, 7\]' is invalid for input of size 20[\s\S]*ERR01001"):
        x.view(3, 7)
    with pytest.raises(RuntimeError, match=r"view size is not compatible[\s\S]*ERR01001 OPS invalid parameter"):
        x.t().view(20)
    with pytest.raises(RuntimeError, match=r"out of bounds for storage[\s\S]*ERR01001"):
        x.as_strided((5, 5), (5, 1))
    with pytest.raises(RuntimeError, match=r"maximum size for tensor at dimension 1 is 5 but size is 9[\s\S]*ERR01001"):
        x.unfold(1, 9, 1)
    with pytest.raises(RuntimeError, match=r"last dimension of size 2[\s\S]*ERR01001"):
        torch.view_as_complex(x)
    torch.testing.assert_close(x.t().reshape(20).cpu(), x.cpu().t().reshape(20))
    torch.testing.assert_close(x.view(2, 10).unfold(1, 4, 3).cpu(), x.cpu().view(2, 10).unfold(1, 4, 3))


def test_pinned_destination_of_a_non_blocking_copy_is_not_reused_before_the_copy_ran(big):
    src = torch.arange(1 << 16, dtype=torch.float32).npu()
    dst = torch.empty(1 << 16).pin_memory()
    address = dst.data_ptr()
    stream = torch.npu.current_stream()
    event = torch.npu.ExternalEvent()
    event.wait(stream)  # hold the stream: the copy below stays queued
    dst.copy_(src, non_blocking=True)
    del dst
    other = torch.empty(1 << 16).pin_memory()
    other_address = other.data_ptr()
    assert other_address != address  # the block waits for its copy
    event.record(torch.npu.Stream())
    torch.npu.synchronize()
    again = torch.empty(1 << 16).pin_memory()
    assert again.data_ptr() == address  # reused once the stream passed the copy
    del other
