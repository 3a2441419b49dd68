"""What NPU graph capture refuses, with torch.cuda's messages and torch_npu's ERR codes, and
that the process stays usable afterwards."""

import threading

import pytest
import torch

import torch_npu  # noqa: F401

NOT_PERMITTED = "operation not permitted when stream is capturing"


def test_capture_on_the_default_stream_raises():
    g = torch.npu.NPUGraph()
    with pytest.raises(RuntimeError, match=r"NPU graphs must be captured on a non-default stream.*\n.*ERR03007"):
        g.capture_begin()
    with torch.npu.graph(g):  # the object is still usable
        torch.ones(4, device="npu").mul_(2)


@pytest.mark.parametrize(
    "synchronizing_call",
    [
        lambda x: x.sum().item(),
        lambda x: x.cpu(),
        lambda x: torch.npu.current_stream().synchronize(),
        lambda x: torch.tensor([1.0, 2.0], device="npu"),
        lambda x: torch.poisson(x),  # runs on the CPU fallback, which waits for the stream
    ],
    ids=["item", "cpu", "stream_synchronize", "pageable_h2d", "cpu_fallback"],
)
def test_synchronizing_during_capture_raises_and_leaves_the_process_usable(synchronizing_call):
    x = torch.ones(8, device="npu")
    g = torch.npu.NPUGraph()
    with pytest.raises(RuntimeError, match=NOT_PERMITTED) as info:
        with torch.npu.graph(g):
            y = x + 1
            synchronizing_call(x)
    assert "ERR0" in str(info.value)
    assert not torch.npu.is_current_stream_capturing()
    # The failed capture was abandoned: the same graph captures again, eager work runs.
    with torch.npu.graph(g):
        y = x + 1
    g.replay()
    torch.testing.assert_close(y.cpu(), torch.full((8,), 2.0))
    torch.testing.assert_close((x * 3).cpu(), torch.full((8,), 3.0))


def test_an_invalidated_capture_fails_at_capture_end():
    s = torch.npu.Stream()
    x = torch.ones(4, device="npu")
    g = torch.npu.NPUGraph()
    with torch.npu.stream(s):
        g.capture_begin()
        with pytest.raises(RuntimeError, match=NOT_PERMITTED):
            x.sum().item()
        with pytest.raises(RuntimeError, match="previous error during capture"):
            x + 1
        with pytest.raises(RuntimeError, match=r"previous error during capture.*\n.*ERR03100"):
            g.capture_end()
    g.reset()
    torch.testing.assert_close((x + 1).cpu(), torch.full((4,), 2.0))


def _sync_from_another_thread() -> BaseException | None:
    failure: list[BaseException] = []

    def work():
        try:
            torch.npu.synchronize()
        except BaseException as e:  # noqa: BLE001 - handed to the test
            failure.append(e)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    return failure[0] if failure else None


@pytest.mark.parametrize("mode", ["global", "thread_local", "relaxed"])
def test_capture_error_modes_decide_which_threads_may_synchronize(mode):
    x = torch.ones(4, device="npu")
    g = torch.npu.NPUGraph()
    s = torch.npu.Stream()
    with torch.npu.stream(s):
        g.capture_begin(capture_error_mode=mode)
        y = x * 2
        other = _sync_from_another_thread()
        own = None
        try:
            torch.npu.synchronize()  # the device, not the capturing stream
        except RuntimeError as e:
            own = e
        if mode == "relaxed":
            g.capture_end()
        else:
            with pytest.raises(RuntimeError, match="previous error during capture"):
                g.capture_end()
    if mode == "global":
        assert other is not None and NOT_PERMITTED in str(other) and "another thread" in str(other)
    else:
        assert other is None
    assert (own is None) == (mode == "relaxed")
    if mode == "relaxed":
        g.replay()
        torch.testing.assert_close(y.cpu(), torch.full((4,), 2.0))


def test_bad_arguments():
    g = torch.npu.NPUGraph()
    s = torch.npu.Stream()
    with torch.npu.stream(s):
        with pytest.raises(ValueError, match=r"Unknown capture_error_mode 'strict'.*\n.*ERR03003"):
            g.capture_begin(capture_error_mode="strict")
    with pytest.raises(RuntimeError, match="without a preceding capture_begin"):
        g.capture_end()
    with pytest.raises(RuntimeError, match="without a preceding successful capture"):
        g.pool()
    x = torch.ones(4, device="npu")
    with torch.npu.stream(s):
        g.capture_begin()
        x.add_(1)
    with pytest.raises(RuntimeError, match="Capture must end on the same stream it began on"):
        g.capture_end()
    with torch.npu.stream(s):
        g.capture_end()
    with pytest.raises(TypeError, match="expects a torch.Generator"):
        g.register_generator_state(3)
    with pytest.raises(ValueError, match="expects an NPU generator"):
        g.register_generator_state(torch.Generator())


def test_out_of_memory_during_capture_is_a_clean_npu_oom():
    g = torch.npu.NPUGraph()
    x = torch.ones(4, device="npu")
    with torch.npu.graph(g):
        with pytest.raises(torch.OutOfMemoryError, match=r"(?s)NPU out of memory.*graph capture is underway.*ERR00006"):
            torch.empty(1 << 48, dtype=torch.uint8, device="npu")
        y = x + 1  # the capture goes on
    g.replay()
    torch.testing.assert_close(y.cpu(), torch.full((4,), 2.0))


def test_an_unregistered_generator_cannot_draw_in_a_capture():
    gen = torch.Generator("npu")
    gen.manual_seed(1)
    g = torch.npu.NPUGraph()
    with pytest.raises(RuntimeError, match=r"not registered with the NPU graph.*\n.*ERR03007"):
        with torch.npu.graph(g):
            torch.rand(16, device="npu", generator=gen)
    torch.rand(16, device="npu", generator=gen)  # eager draws are unaffected
